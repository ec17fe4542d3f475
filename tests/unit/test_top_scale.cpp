// `gpupart top` at the scale of a real GPU node: 33 processes at 80x24, 120x40, 200x50 and 200x200. The
// table gets the rows (the side panel's meters never take them), no cell is written over, --batch prints
// every process, letters and labels stay readable on their colours, the selection follows its process.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "platform/process_usage.hpp"
#include "top/top_colours.hpp"
#include "top/top_input.hpp"
#include "top/top_layout.hpp"
#include "top/top_view.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

constexpr int kProcesses = 33;

// 33 demo-like workers, two TPCs each (the H200's 66): job-0 .. job-32.
std::vector<FakeProcess> node_processes() {
    std::vector<FakeProcess> fakes;
    const auto tpcs = real_tpcs(h200()).bits();
    for (int i = 0; i < kProcesses; ++i)
        fakes.push_back({6000 + i, fmt::format("{},{}", tpcs[2 * static_cast<std::size_t>(i)], tpcs[2 * static_cast<std::size_t>(i) + 1]),
                         fmt::format("gpupart-demo-worker job-{} (simulated workload, no GPU)", i)});
    return fakes;
}

// The process rows the table shows: rows whose pid cell holds one of the 33 pids.
std::vector<int> process_rows(const Screen& screen) {
    std::vector<int> rows;
    for (int r = 0; r < screen.height(); ++r) {
        const std::string line = screen.row_text(r);
        for (int i = 0; i < kProcesses; ++i)
            if (line.find(fmt::format(" {} ", 6000 + i)) != std::string::npos && line.find("job-") != std::string::npos) {
                rows.push_back(r);
                break;
            }
    }
    return rows;
}

int row_starting(const Screen& screen, const std::string& prefix) {
    for (int r = 0; r < screen.height(); ++r)
        if (screen.row_text(r).starts_with(prefix)) return r;
    return -1;
}

// The table's title row (the PID title moves a cell left when PID is not the sorted column).
int table_header(const Screen& screen) {
    for (int r = 0; r < screen.height(); ++r)
        if (const std::string line = screen.row_text(r); line.find(" PID") != std::string::npos && line.find(" USER ") != std::string::npos) return r;
    return -1;
}

// Every process row's COMMAND cell is what the table wrote for it: "job-N (simulated workload, no GPU)"
// (the shared program after it) whole or cut with "…", nothing else written over its end.
void expect_commands_whole(const Screen& screen) {
    const int header = table_header(screen);
    ASSERT_GE(header, 0) << screen.text();
    const auto column = screen.row_text(header).find("COMMAND");
    ASSERT_NE(column, std::string::npos);
    const int command_cell = text_width(screen.row_text(header).substr(0, column));
    for (int r : process_rows(screen)) {
        std::u32string cells;
        for (int c = command_cell; c < screen.width(); ++c) cells += screen.at(r, c).ch;
        while (!cells.empty() && cells.back() == U' ') cells.pop_back();
        std::string text;
        for (char32_t ch : cells) text += encode_utf8(ch);
        const auto job = text.find("job-");
        ASSERT_NE(job, std::string::npos) << "row " << r << ": " << screen.row_text(r);
        const std::string number = text.substr(job + 4, text.find(' ', job) - job - 4);
        // Where the column has room for the whole command line it is shown as it is; else the part that
        // tells the processes apart first.
        const std::string written = job == 0 ? fmt::format("job-{} (simulated workload, no GPU) · gpupart-demo-worker", number)
                                             : fmt::format("gpupart-demo-worker job-{} (simulated workload, no GPU)", number);
        if (text.ends_with("…"))
            EXPECT_TRUE(written.starts_with(text.substr(0, text.size() - std::string("…").size()))) << screen.row_text(r);
        else
            EXPECT_EQ(text, written) << screen.row_text(r);
    }
}

struct Size {
    int width;
    int height;
    int least_rows;  // process rows at least (main showed 5 at 200x50, 13 at 120x40)
};

}  // namespace

// The table takes every row below a compact header, the floorplan and the findings: from its header down
// to the findings (or the status line) each line is a process or the table's own "↓ N more" line.
TEST(TopScale, TheTableGetsTheRowsWithManyProcesses) {
    const TopData data = frame_data(node_processes());
    for (const Size size : {Size{80, 24, 8}, Size{120, 40, 20}, Size{200, 50, 30}, Size{200, 200, kProcesses}}) {
        const Screen screen = layout_top(data, UiState{}, size.width, size.height);
        SCOPED_TRACE(fmt::format("{}x{}\n{}", size.width, size.height, screen.text()));
        const auto rows = process_rows(screen);
        EXPECT_GE(static_cast<int>(rows.size()), size.least_rows);
        ASSERT_FALSE(rows.empty());
        const int header = row_starting(screen, "       PID");
        EXPECT_EQ(rows.front(), header + 1);
        for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i], rows[i - 1] + 1);  // no gap
        if (static_cast<int>(rows.size()) < kProcesses) {
            const std::string more = screen.row_text(rows.back() + 1);
            EXPECT_NE(more.find(fmt::format("↓ {} more", kProcesses - static_cast<int>(rows.size()))), std::string::npos) << more;
            EXPECT_TRUE(screen.row_text(rows.back() + 2).starts_with("  Findings")) << "the findings right under the table";
        }
        expect_commands_whole(screen);
        EXPECT_EQ(row_starting(screen, "gpupart top"), 0);
    }
}

// Where the side panel stands (200 columns) its meters show the biggest holders only, in the floorplan's rows.
TEST(TopScale, TheSidePanelShowsTheBiggestHoldersWithinTheFloorplansRows) {
    const Screen screen = layout_top(frame_data(node_processes()), UiState{}, 200, 50);
    SCOPED_TRACE(screen.text());
    EXPECT_NE(screen.text().find("TPC share · the "), std::string::npos);
    EXPECT_NE(screen.text().find(" more in the table"), std::string::npos);
    const int table = row_starting(screen, "       PID");
    for (int r = table; r < screen.height(); ++r) EXPECT_EQ(screen.row_text(r).find("TPC share"), std::string::npos);
}

// v (and --no-floorplan, F2, floorplan=no in toprc) hides the floorplan: the table takes its rows.
TEST(TopScale, HidingTheFloorplanGivesItsRowsToTheTable) {
    const TopData data = frame_data(node_processes());
    UiState ui;
    const auto with = process_rows(layout_top(data, ui, 80, 24)).size();
    ui.settings.show_floorplan = false;
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_EQ(screen.text().find("Floorplan"), std::string::npos);
    EXPECT_GE(process_rows(screen).size(), with + 5);
    expect_commands_whole(screen);
}

// "↓ N more" has a line of its own: never over the last process row's COMMAND.
TEST(TopScale, TheMoreLineIsALineOfItsOwn) {
    const TopData data = frame_data(node_processes());
    UiState ui;
    for (int pid : {6000, 6020, 6032}) {  // scrolled to the top, the middle, the end
        ui.selected_pid = pid;
        const Screen screen = layout_top(data, ui, 120, 40);
        SCOPED_TRACE(screen.text());
        const auto rows = process_rows(screen);
        ASSERT_FALSE(rows.empty());
        const std::string after = screen.row_text(rows.back() + 1);
        EXPECT_TRUE(after.find("↓") != std::string::npos || after.find("↑") != std::string::npos) << after;
        EXPECT_EQ(after.find("job-"), std::string::npos);
        expect_commands_whole(screen);
    }
}

// --batch prints every process, as top -b, in a frame as tall as they need, with no key hints.
TEST(TopScale, BatchPrintsEveryProcessWithoutHints) {
    const TopData data = frame_data(node_processes());
    UiState ui;
    ui.batch = true;
    for (const Size size : {Size{80, 24, 0}, Size{120, 40, 0}, Size{200, 50, 0}}) {
        const Screen screen = layout_top(data, ui, size.width, size.height);
        SCOPED_TRACE(screen.text());
        EXPECT_EQ(static_cast<int>(process_rows(screen).size()), kProcesses);
        const std::string text = screen.text();
        for (const char* hint : {"F1Help", "↓", "f reads them whole", "PgUp", "f shows them all", "▸"})
            EXPECT_EQ(text.find(hint), std::string::npos) << hint << "\n" << text.substr(text.find(hint) > 200 ? text.find(hint) - 200 : 0, 300);
        EXPECT_NE(text.find("Findings ("), std::string::npos);
        expect_commands_whole(screen);
    }
}

// No bold on a coloured background (xterm draws bold black as grey: unreadable on green or cyan); each
// background gets black or white, whichever stands out on it.
TEST(TopScale, NoBoldBlackOnColours) {
    for (int role = 0; role <= static_cast<int>(Role::filter_marker); ++role)
        for (bool bold : {false, true}) {
            Cell cell;
            cell.role = static_cast<Role>(role);
            cell.bold = bold;
            const Look look = colour_cell_look(cell);
            if (look.background == Ansi::own) continue;
            EXPECT_FALSE(look.bold) << "role " << role;
            EXPECT_EQ(look.foreground, contrast_on(look.background)) << "role " << role;
        }
    EXPECT_EQ(contrast_on(Ansi::green), Ansi::black);
    EXPECT_EQ(contrast_on(Ansi::blue), Ansi::white);
    // The letters in the table and the meters' labels are drawn bold on their owner's colour: painted plain.
    const Screen screen = layout_top(frame_data(node_processes()), UiState{}, 200, 50);
    const int row = process_rows(screen).front();
    EXPECT_TRUE(screen.at(row, 2).bold);
    EXPECT_FALSE(colour_cell_look(screen.at(row, 2)).bold);
}

TEST(TopScale, TheSelectionGoesToTheNearestNeighbourAndFollowsItsProcess) {
    // The selected process is still there (re-sorted, moved): it stays selected.
    EXPECT_EQ(selection_after({1, 2, 3, 4, 5}, 3, {5, 4, 3, 2, 1}), 3);
    // Gone: the one below it in the order shown, then the one above (the last row), never the first row.
    EXPECT_EQ(selection_after({1, 2, 3, 4, 5}, 3, {1, 2, 4, 5}), 4);
    EXPECT_EQ(selection_after({1, 2, 3, 4, 5}, 3, {1, 2, 5}), 2);
    EXPECT_EQ(selection_after({1, 2, 3, 4, 5}, 5, {1, 2, 3, 4}), 4);
    EXPECT_EQ(selection_after({5, 4, 3, 2, 1}, 3, {5, 4, 2, 1}), 2);  // in the order shown (here PID↓)
    EXPECT_EQ(selection_after({1, 2}, 1, {}), 0);
}

// A letter freed by an exit is not given to a newcomer while the view still says "B exited".
TEST(TopScale, ALetterIsNotReusedWhileItsExitIsAnnounced) {
    OwnerLetters letters;
    letters.update({{10, 1, "a"}, {20, 2, "b"}, {30, 3, "c"}});
    const auto exited = letters.update({{10, 1, "a"}, {30, 3, "c"}});
    ASSERT_EQ(exited.size(), 1u);
    EXPECT_EQ(exited[0].letter, 'B');
    letters.hold_back({static_cast<std::size_t>(exited[0].index)});
    letters.update({{10, 1, "a"}, {30, 3, "c"}, {40, 4, "d"}});
    EXPECT_EQ(letters.mark(40, 4).letter, 'D');
    letters.hold_back({});  // the notice is gone: the letter is free again
    letters.update({{10, 1, "a"}, {30, 3, "c"}, {40, 4, "d"}, {50, 5, "e"}});
    EXPECT_EQ(letters.mark(50, 5).letter, 'B');
}

// CPU% and RSS for every process the table shows, demo workers included (they are real processes): this
// test's own process, sampled twice.
TEST(TopScale, CpuAndRssForEveryProcessDemoWorkersToo) {
    std::ifstream stat("/proc/self/stat");
    std::string line;
    std::getline(stat, line);
    const auto fields = stat_fields_after_comm(line);
    ASSERT_GE(fields.size(), 20u);
    TopData data;
    TopProcess self;
    self.pid = static_cast<int>(::getpid());
    self.start_time = std::stoull(fields[19]);
    self.simulated = true;  // as a gpupart-demo-worker
    data.processes.push_back(self);
    ProcessUsageSampler usage;
    const auto start = std::chrono::steady_clock::now();
    add_usage(data, usage, start);
    volatile unsigned long spin = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200)) spin = spin + 1;
    add_usage(data, usage, std::chrono::steady_clock::now());
    ASSERT_TRUE(data.processes[0].rss_bytes.has_value());
    EXPECT_GT(*data.processes[0].rss_bytes, 0u);
    ASSERT_TRUE(data.processes[0].cpu_percent.has_value());
    EXPECT_GT(*data.processes[0].cpu_percent, 10.0);  // it spun for 200 ms
}

// Sorted by TPCS or SHARE the title carries the arrow too (their columns were one cell too narrow).
TEST(TopScale, EverySortedColumnShowsItsArrow) {
    const TopData data = frame_data(node_processes());
    for (int width : {80, 200}) {
        UiState ui;
        for (SortKey key : {SortKey::tpcs, SortKey::share, SortKey::sms, SortKey::gpu}) {
            ui.sort = key;
            ui.sort_descending = true;
            const Screen screen = layout_top(data, ui, width, 50);
            if (width == 80 && key == SortKey::gpu) continue;  // not a column at 80
            // After the title where the column has a cell to spare, else in the space before it.
            const std::string name(sort_key_name(key));
            const std::string header = screen.row_text(table_header(screen));
            const std::string title = header.find(name + "↓") != std::string::npos ? name + "↓" : "↓" + name;
            EXPECT_NE(header.find(title), std::string::npos) << width << " " << title << "\n" << screen.text();
        }
    }
}

// The help box at 60x16 shows part of its lines and scrolls with the arrows and PgUp/PgDn (any other key
// closes it, as before).
TEST(TopScale, TheHelpScrollsAt60x16) {
    const TopData data = frame_data(node_processes());
    UiState ui;
    Screen last = layout_top(data, ui, 60, 16);
    handle_key(ui, data, last, code_key(KeyCode::f1));
    last = layout_top(data, ui, 60, 16);
    SCOPED_TRACE(last.text());
    EXPECT_NE(last.text().find("1-12 of "), std::string::npos);
    EXPECT_NE(last.text().find("Tab        focus table"), std::string::npos);
    for (int r = 0; r < last.height(); ++r) {  // inside the box: wrapped, not cut
        const std::string line = last.row_text(r);
        const auto left = line.find("│"), right = line.rfind("│");
        if (left != std::string::npos && right != left) {
            EXPECT_EQ(line.substr(left, right - left).find("…"), std::string::npos) << line;
        }
    }
    handle_key(ui, data, last, code_key(KeyCode::down));
    EXPECT_EQ(ui.dialog, Dialog::help);
    last = layout_top(data, ui, 60, 16);
    EXPECT_NE(last.text().find("2-13 of "), std::string::npos) << last.text();
    EXPECT_EQ(last.text().find("Tab        focus table"), std::string::npos);
    handle_key(ui, data, last, code_key(KeyCode::page_down));
    last = layout_top(data, ui, 60, 16);
    EXPECT_NE(last.text().find("13-24 of "), std::string::npos) << last.text();
    handle_key(ui, data, last, code_key(KeyCode::end));
    last = layout_top(data, ui, 60, 16);
    EXPECT_NE(last.text().find("lists them."), std::string::npos) << last.text();
    handle_key(ui, data, last, char_key('x'));
    EXPECT_EQ(ui.dialog, Dialog::none);
}

// htop's keys where htop users press them: P M T sort, F7 F8 a TPC more or less, Ctrl-L repaints, v hides
// the floorplan; the help and the footer name them.
TEST(TopScale, HtopsKeysDoTheNearestThing) {
    const TopData data = frame_data(node_processes());
    UiState ui;
    ui.selected_pid = 6003;
    const Screen last = layout_top(data, ui, 200, 50);
    handle_key(ui, data, last, char_key('P'));
    EXPECT_EQ(ui.sort, SortKey::cpu);
    EXPECT_TRUE(ui.sort_descending);
    handle_key(ui, data, last, char_key('M'));
    EXPECT_EQ(ui.sort, SortKey::rss);
    handle_key(ui, data, last, char_key('T'));
    EXPECT_EQ(ui.sort, SortKey::launches);
    const Intent grow = handle_key(ui, data, last, code_key(KeyCode::f7));
    EXPECT_EQ(grow.kind, IntentKind::grow);
    ASSERT_EQ(grow.targets.size(), 1u);
    EXPECT_EQ(grow.targets[0].pid, 6003);
    EXPECT_EQ(handle_key(ui, data, last, code_key(KeyCode::f8)).kind, IntentKind::shrink);
    EXPECT_EQ(handle_key(ui, data, last, char_key(0x0c)).kind, IntentKind::redraw);
    handle_key(ui, data, last, char_key('v'));
    EXPECT_FALSE(ui.settings.show_floorplan);
    handle_key(ui, data, last, code_key(KeyCode::f5));
    EXPECT_NE(ui.message.find("tree"), std::string::npos);
    const std::string footer = layout_top(data, UiState{}, 200, 50).row_text(49);
    for (const char* key : {"F7TPC+", "F8TPC-", "PMTSort", "vFloorplan", "^LRedraw"}) EXPECT_NE(footer.find(key), std::string::npos) << footer;
    UiState help;
    help.dialog = Dialog::help;
    const std::string text = layout_top(data, help, 80, 24).text();
    for (const char* line : {"P M T      sort by CPU%", "F7 F8", "^L", "v          floorplan", "F5 no tree"})
        EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

// The per-GPC summary is never cut: too long for its room, every row takes the short form ("A1 E1 *2 .4",
// the floorplan's own marks), not only the row that needs it.
TEST(TopScale, GpcSummariesAreShortenedAlikeNeverCut) {
    const Screen screen = layout_top(frame_data(node_processes()), UiState{}, 120, 40);
    SCOPED_TRACE(screen.text());
    int long_form = 0, short_form = 0;
    for (int r = 0; r < screen.height(); ++r) {
        const std::string line = screen.row_text(r);
        if (!line.starts_with("gpc")) continue;
        const std::string summary = line.substr(line.rfind("│ ") + std::string("│ ").size());
        EXPECT_EQ(summary.find("…"), std::string::npos) << line;
        (summary.find(" · ") != std::string::npos ? long_form : short_form) += 1;
    }
    EXPECT_EQ(long_form, 0);
    EXPECT_EQ(short_form, 8);
}
