// gpupart top's htop habits on hand-made frames: the filter marker, sorting by
// every column, the selection that keeps each process's colour, the header that shrinks before the clock,
// the findings view, and what differs from htop said in the help.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "top/top_layout.hpp"
#include "top/top_view.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

int row_starting(const Screen& screen, const std::string& prefix) {
    for (int r = 0; r < screen.height(); ++r)
        if (screen.row_text(r).starts_with(prefix)) return r;
    return -1;
}

int table_header_row(const Screen& screen) {
    for (const Hit& hit : screen.hits)
        if (hit.kind == HitKind::sort_column) return hit.row;
    return -1;
}

// The column where `text` starts in `row` (-1: not there), in cells.
int column_of(const Screen& screen, int row, const std::string& text) {
    const std::string line = screen.row_text(row);
    const auto at = line.find(text);
    return at == std::string::npos ? -1 : text_width(line.substr(0, at));
}

std::string collapse_spaces(const std::string& text) {
    std::istringstream words(text);
    std::string out;
    for (std::string word; words >> word;) out += (out.empty() ? "" : " ") + word;
    return out;
}

}  // namespace

TEST(TopHabits, AFilterIsMarkedInTheTableHeaderAndTheFooter) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    const Screen plain = layout_top(data, ui, 80, 24);
    EXPECT_EQ(plain.text().find("filter:"), std::string::npos);
    EXPECT_EQ(plain.text().find("FILTER"), std::string::npos);
    ui.filter = "train";
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    const int header = table_header_row(screen);
    ASSERT_GE(header, 0);
    // At 80 columns the COMMAND column has no room for its title and the marker: the marker takes its place.
    EXPECT_TRUE(screen.row_text(header).ends_with(" MEM SHIM     filter: train")) << screen.row_text(header);
    const int marker = column_of(screen, header, "filter: train");
    EXPECT_EQ(screen.at(header, marker).role, Role::filter_marker);
    EXPECT_TRUE(screen.at(header, marker).bold);
    EXPECT_GE(row_starting(screen, "▸ C    4103"), 0);
    EXPECT_LT(row_starting(screen, "  A    4101"), 0);  // filtered out
    // As htop: F4's label reads FILTER, highlighted, while the filter is on.
    const int footer = screen.height() - 1;
    const int f4 = column_of(screen, footer, "F4FILTER");
    ASSERT_GE(f4, 0) << screen.row_text(footer);
    EXPECT_EQ(screen.at(footer, f4 + 2).role, Role::filter_marker);
    // At 60 columns the table has no COMMAND column to hold the marker: the footer still says it.
    const Screen narrow = layout_top(data, ui, 60, 16);
    SCOPED_TRACE(narrow.text());
    EXPECT_GE(column_of(narrow, 15, "F4FILTER"), 0);
    // At 120 columns it stands right of the COMMAND title.
    const Screen wide = layout_top(data, ui, 120, 40);
    const int wide_header = table_header_row(wide);
    EXPECT_NE(wide.row_text(wide_header).find(" COMMAND"), std::string::npos) << wide.row_text(wide_header);
    EXPECT_TRUE(wide.row_text(wide_header).ends_with(" filter: train")) << wide.row_text(wide_header);
    EXPECT_EQ(wide.at(wide_header, column_of(wide, wide_header, "filter: train")).role, Role::filter_marker);
}

TEST(TopHabits, EveryColumnSortsWithItsTitleMarkedAndItsOwnOrder) {
    TopData data = frame_data(demo_processes());
    data.processes[0].launches = 50;
    data.processes[1].launches = 7000;
    data.processes[2].launches = 300;
    data.processes[0].rss_bytes = 900ull << 20;
    data.processes[2].rss_bytes = 40ull << 20;
    data.processes[1].cpu_percent = 3;
    data.processes[0].applied = "0-3";
    data.processes[1].applied = "-";
    data.processes[2].applied = "(next launch)";
    data.processes[0].scaling = "compute 1.94x";  // SCALING is shown once a process has a saved curve
    data.processes[2].app_masks = true;           // APP once a program chooses its own masks
    UiState ui;
    const Screen all = layout_top(data, ui, 200, 60);
    EXPECT_EQ(all.table_columns, std::vector<SortKey>(std::begin(kSortKeys), std::end(kSortKeys)));  // all 17 at 200 columns
    for (SortKey key : kSortKeys) {
        ui.sort = key;
        ui.sort_descending = sorts_highest_first(key);
        const Screen screen = layout_top(data, ui, 200, 60);
        const int header = table_header_row(screen);
        const int title = column_of(screen, header, std::string(sort_key_name(key)));
        ASSERT_GE(title, 0) << sort_key_name(key);
        EXPECT_EQ(screen.at(header, title).role, Role::sorted_header) << sort_key_name(key);
    }
    const auto order = [&](SortKey key) {
        ui.sort = key;
        ui.sort_descending = sorts_highest_first(key);
        std::vector<int> pids;
        for (const TopProcess* p : visible_processes(data, ui)) pids.push_back(p->pid);
        return pids;
    };
    EXPECT_EQ(order(SortKey::launches), (std::vector<int>{4102, 4103, 4101}));  // highest first
    EXPECT_EQ(order(SortKey::rss), (std::vector<int>{4101, 4103, 4102}));       // none (a demo worker's) last
    EXPECT_EQ(order(SortKey::cpu), (std::vector<int>{4102, 4101, 4103}));
    EXPECT_EQ(order(SortKey::applied), (std::vector<int>{4103, 4102, 4101}));   // as text, lowest first
    EXPECT_EQ(order(SortKey::share), order(SortKey::tpcs));
    EXPECT_EQ(order(SortKey::share), (std::vector<int>{4101, 4103, 4102}));     // 28, 18, 16 TPCs
    // REQUESTED in floorplan order: the mask holding the lowest TPCs first. A gets TPCs 5 and 13 (of gpc5):
    // after B's (from TPC 4), before C's (from TPC 6).
    data.processes[0].mask = TpcMask{};
    data.processes[0].mask.set(5);
    data.processes[0].mask.set(13);
    EXPECT_EQ(order(SortKey::requested), (std::vector<int>{4102, 4101, 4103}));
    EXPECT_EQ(sort_key_named("cpu%"), SortKey::cpu);
    EXPECT_EQ(sort_key_named("LAUNCH/s"), SortKey::rate);
    EXPECT_FALSE(sort_key_named("nice").has_value());
}

// The selected row is drawn in the selection's colours, but the process's letter keeps its owner colours
// and the cells either side of it keep the unselected look: owner1's colours are the bar's own (black on
// cyan), and without the gap B's letter would vanish into the bar.
TEST(TopHabits, TheSelectionNeverHidesAProcesssColour) {
    const TopData data = frame_data(demo_processes());
    for (const TopProcess& p : data.processes) {
        for (const bool focused : {true, false}) {
            UiState ui;
            ui.selected_pid = p.pid;
            ui.focus = focused ? Focus::table : Focus::floorplan;
            const Screen screen = layout_top(data, ui, 80, 24);
            const int r = row_starting(screen, fmt::format("▸ {}", p.letter));
            ASSERT_GE(r, 0) << screen.text();
            SCOPED_TRACE(fmt::format("{} focused={}", p.letter, focused));
            EXPECT_EQ(screen.at(r, 2).role, owner_role(p.colour));
            EXPECT_EQ(screen.at(r, 2).ch, static_cast<char32_t>(p.letter));
            EXPECT_FALSE(screen.at(r, 2).reverse);
            EXPECT_EQ(screen.at(r, 1).role, Role::normal);
            EXPECT_EQ(screen.at(r, 3).role, Role::normal);
            if (focused) {
                EXPECT_EQ(screen.at(r, 0).role, Role::row_selected);
                for (int c = 4; c < screen.width(); ++c) EXPECT_EQ(screen.at(r, c).role, Role::row_selected) << c;
            } else {
                EXPECT_TRUE(screen.at(r, 5).underline);  // the unfocused table marks its row by underlining
            }
        }
    }
    EXPECT_EQ(owner_role(1), Role::owner1);  // the case the gap is for (top_curses: both black on cyan)
}

// The header's first line shrinks rather than running into the clock; the meters row keeps whole parts.
TEST(TopHabits, TheHeaderShrinksBeforeTheClockAt60And80And120Columns) {
    TopData data = frame_data(demo_processes());
    data.gpu.name = known_fact(std::string("NVIDIA H100 80GB HBM3"), Provenance{Source::recorded, "test"});
    data.gpu.uuid = known_fact(std::string("GPU-3ecd459c-0b85-7601-6d1e-4c1b2a3f5e6d"), Provenance{Source::recorded, "test"});
    data.source.gpu_count = 8;
    GpuMeters meters;
    meters.gpu_percent = 87;
    meters.memory_used_bytes = 31ull << 30;
    meters.memory_total_bytes = 80ull << 30;
    meters.power_watts = 412.3;
    meters.power_limit_watts = 700;
    meters.sm_clock_mhz = 1755;
    meters.max_sm_clock_mhz = 1980;
    meters.temperature_c = 61;
    add_meters(data, meters, "");
    const auto parts = meter_parts(meters);
    for (const int width : {60, 80, 120}) {
        const Screen screen = layout_top(data, UiState{}, width, 30);
        SCOPED_TRACE(screen.text());
        const std::string first = screen.row_text(0);
        EXPECT_TRUE(first.ends_with(" 12:00:00")) << width;
        EXPECT_EQ(screen.at(0, width - 9).ch, U' ');  // a blank between the header and the clock, always
        EXPECT_EQ(text_width(first), width);
        EXPECT_NE(first.find("NVIDIA H100 80GB HBM3"), std::string::npos) << "the GPU's name is never cut at " << width;
        // The meters row: whole parts from the first, none cut.
        std::string whole;
        bool matched = false;
        for (const std::string& part : parts) {
            whole += (whole.empty() ? "" : " · ") + part;
            if (screen.row_text(2) == whole) matched = true;
        }
        EXPECT_TRUE(matched) << screen.row_text(2);
    }
    EXPECT_TRUE(layout_top(data, UiState{}, 120, 30).row_text(0).starts_with("gpupart top · GPU 0 of 8: NVIDIA H100 80GB HBM3 Hopper · GPU-3ecd"));
    EXPECT_EQ(layout_top(data, UiState{}, 60, 30).row_text(0), "gpupart top · GPU 0 of 8: NVIDIA H100 80GB HBM3     12:00:00");
    // A name longer than the line is cut with "…", a space short of the clock.
    data.gpu.name = known_fact(std::string("NVIDIA H100 80GB HBM3 with a name far longer than any real one"), Provenance{Source::recorded, "test"});
    const std::string cut = layout_top(data, UiState{}, 60, 30).row_text(0);
    EXPECT_EQ(cut, "GPU 0 of 8: NVIDIA H100 80GB HBM3 with a name far … 12:00:00");
}

// At 80x24 the findings panel cuts a long finding to one line; f shows it whole across wrapped lines.
TEST(TopHabits, TheFindingsViewShowsALongFindingWholeAt80x24) {
    TopData data = frame_data(demo_processes());
    Finding f;
    f.severity = Severity::warning;
    f.id = "partial-gpc";
    f.rule = "Bakita & Anderson, RTAS 2024, section 5";
    f.message = "process 4101 (llm-serving) holds 2 of gpc7's 9 TPCs while process 4103 holds the other 7: the two share "
                "gpc7's L1 bandwidth and its raster units, so a burst of one slows the other; give whole GPCs "
                "(gpupart set 4101 gpc4) or accept the interference; this sentence ends here at the very end";
    data.findings.push_back(f);
    UiState ui;
    const Screen panel = layout_top(data, ui, 80, 24);
    EXPECT_EQ(panel.text().find("at the very end"), std::string::npos) << "the panel cut it (else this test proves nothing)";
    ui.dialog = Dialog::findings_list;
    ui.findings_first_line = 1000;  // past the end: shown from the last page
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    std::string inside;
    for (int r = 1; r < screen.height() - 1; ++r) {
        const std::string line = screen.row_text(r);
        EXPECT_EQ(text_width(line), line.empty() ? 0 : 80);
        const auto left = line.find("│") + std::string("│").size();
        inside += " " + line.substr(left, line.rfind("│") - left);  // between the box's borders
    }
    const std::string whole = collapse_spaces(inside);
    EXPECT_NE(whole.find(collapse_spaces(f.message + " [partial-gpc; Bakita & Anderson, RTAS 2024, section 5]")), std::string::npos)
        << whole;
    EXPECT_EQ(whole.find("…"), std::string::npos) << "nothing is cut";
    EXPECT_NE(whole.find("Esc closes"), std::string::npos);
    EXPECT_GT(screen.findings_lines, 5);
}

TEST(TopHabits, TheHelpSaysWhereF9AndKDifferFromHtop) {
    UiState ui;
    ui.dialog = Dialog::help;
    const Screen screen = layout_top(frame_data(demo_processes()), ui, 80, 24);
    const std::string text = screen.text();
    EXPECT_NE(text.find("F9 changes TPCs, never sends a signal; k only says so"), std::string::npos) << text;
    EXPECT_NE(text.find("(kill(1) ends a process)"), std::string::npos) << text;
    EXPECT_NE(text.find("any key closes this help"), std::string::npos) << "the whole help fits 80x24\n" << text;
}

// Per-process GPU utilisation is NVML's latest sample (nvtop's GPU%): a process NVML sampled shows its
// figure, a CUDA process it did not sample ran no work (0), a demo worker or an NVML without samples "-".
TEST(TopHabits, GpuPercentIsNvmlsPerProcessSampleAndSortsHighestFirst) {
    TopData data = frame_data({{4201, "gpc0-1", "python3 serve.py"}, {4202, "gpc2-3", "python3 train.py"},
                               {4203, "gpc4", "python3 idle.py"}, {4204, "gpc5", "gpupart-demo-worker vision (simulated)"}});
    data.processes[3].simulated = true;
    GpuMeters meters;
    meters.process_utilization_read = true;
    meters.process_utilization[4201] = ProcessUtilization{63, 20};
    meters.process_utilization[4202] = ProcessUtilization{91, 5};
    meters.process_utilization[4204] = ProcessUtilization{50, 5};  // a pid reused by nothing gpupart shows as CUDA
    add_meters(data, meters, "");
    EXPECT_EQ(data.processes[0].gpu_percent, 63);
    EXPECT_EQ(data.processes[1].gpu_percent, 91);
    EXPECT_EQ(data.processes[2].gpu_percent, 0);
    EXPECT_FALSE(data.processes[3].gpu_percent.has_value());
    UiState ui;
    ui.sort = SortKey::gpu;
    ui.sort_descending = sorts_highest_first(SortKey::gpu);
    std::vector<int> pids;
    for (const TopProcess* p : visible_processes(data, ui)) pids.push_back(p->pid);
    EXPECT_EQ(pids, (std::vector<int>{4202, 4201, 4203, 4204}));
    const Screen screen = layout_top(data, ui, 200, 40);
    SCOPED_TRACE(screen.text());
    const int header = table_header_row(screen);
    const int title = column_of(screen, header, "GPU%");
    ASSERT_GE(title, 0);
    EXPECT_EQ(screen.at(header, title).role, Role::sorted_header);
    const int first = header + 1;
    EXPECT_NE(screen.row_text(first).find(" 91 "), std::string::npos) << screen.row_text(first);
    // An NVML that refuses per-process samples leaves every process "-", never 0.
    TopData refused = frame_data({{4201, "gpc0-1", "python3 serve.py"}});
    GpuMeters none;
    add_meters(refused, none, "");
    EXPECT_FALSE(refused.processes[0].gpu_percent.has_value());
}

// Under MPS NVML gives the GPU's time to the MPS server and no sample to its clients (H100, driver 580): a
// client is "-", not 0%, and the meters row says where the time went.
TEST(TopHabits, UnderMpsAClientWithoutASampleIsUnknownNotIdle) {
    TopData data = frame_data({{4201, "gpc0-1", "python3 serve.py"}, {4202, "gpc2-3", "python3 train.py"}}, true);
    GpuMeters meters;
    meters.gpu_percent = 99;
    meters.process_utilization_read = true;
    meters.process_utilization[9999] = ProcessUtilization{99, 51};  // nvidia-cuda-mps-server
    meters.process_memory[4201] = 712ull << 20;
    meters.process_memory[4202] = 712ull << 20;
    add_meters(data, meters, "");
    EXPECT_FALSE(data.processes[0].gpu_percent.has_value());
    EXPECT_FALSE(data.processes[1].gpu_percent.has_value());
    const Screen screen = layout_top(data, UiState{}, 200, 40);
    EXPECT_NE(screen.row_text(2).find("MPS: NVML gives GPU% to the server; LAUNCH/s is each client's"), std::string::npos)
        << screen.text();
}
