// The layout of `gpupart top` at 80x24, 120x40 and 200x60, read as text and as cells: no terminal.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_layout.hpp"
#include "top_screen_text.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

// The row whose text starts with `prefix` (-1: none).
int row_starting(const Screen& screen, const std::string& prefix) {
    for (int r = 0; r < screen.height(); ++r)
        if (screen.row_text(r).starts_with(prefix)) return r;
    return -1;
}

}  // namespace

TEST(TopLayout, At80x24EverySectionIsThere) {
    const TopData data = frame_data(demo_processes());
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    expect_fits(screen);
    const std::string text = screen.text();
    SCOPED_TRACE(text);
    EXPECT_TRUE(screen.row_text(0).starts_with("gpupart top · GPU 0: NVIDIA H200 Hopper · recording builtin:h200"));
    EXPECT_TRUE(screen.row_text(0).ends_with("12:00:00"));
    EXPECT_EQ(screen.row_text(1), "MPS off · TPCs 66 owned, 0 free of 66 · 3 simulated processes (demo)");  // no room for more
    EXPECT_EQ(screen.row_text(2), "no NVIDIA GPU on this machine: showing the built-in recorded H200");
    // One GPC a line with the TPC numbers in the driver's slot order (gpc0's slots hold descriptor bits
    // 0 3 81 1 75 83 - 2 78, TPCs 0 24 64 8 62 65 - 16 63); the floorswept slot 6 of an 8-TPC GPC is a
    // blank slot inside the GPC's frame.
    EXPECT_EQ(screen.row_text(row_starting(screen, "gpc0")),
              "gpc0   │  A 0  A 24  A 64   A 8  A 62  A 65        A 16  A 63 │ A 8");
    EXPECT_EQ(screen.row_text(row_starting(screen, "gpc6")),
              "gpc6   │  C 6  C 30  C 51  C 14  C 37  C 58  C 22  C 44  C 60 │ C 9");
    EXPECT_EQ(row_starting(screen, "no GPC"), -1);  // every TPC of the built-in H200 has its GPC
    // The table: letter, pid, user, TPCs, SMs, share, launches/s, memory, shim, command.
    const int header = row_starting(screen, "       PID↑ USER");
    ASSERT_GE(header, 0);
    EXPECT_EQ(screen.row_text(header), "       PID↑ USER     TPCS SMS SHARE  LAUNCH/s  MEM SHIM     COMMAND");
    // COMMAND starts with what tells the processes apart; the program they share comes after.
    EXPECT_EQ(screen.row_text(header + 1), "▸ A    4101 root       32  64   48%       400    - active   llm-serving (simula…");
    EXPECT_EQ(screen.row_text(header + 3), "  C    4103 root       18  36   27%       400    - active   batch-train (simula…");
    // Every finding, one line each; the status line; the footer of keys.
    EXPECT_TRUE(contains(screen, "  Findings (3)"));  // every TPC is held: no idle-TPCs finding
    EXPECT_TRUE(contains(screen, "  warning 3 partitioned processes run without MPS"));
    EXPECT_TRUE(screen.row_text(22).starts_with("A 4101 · TPCs 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 · applied 0-3,"));
    // F7 F8 where htop has its nice keys: here a TPC more or less.
    EXPECT_TRUE(screen.row_text(23).starts_with("F1Help F2Setup F3Search F4Filter F6SortBy F7TPC+ F8TPC- F9Action F10Quit"));
}

// A source without the driver's floorplan (the probe alone) leaves TPCs of no known GPC: one row holds
// them after the GPCs, a TPC a slot.
TEST(TopLayout, TpcsOfNoKnownGpcHaveARowOfTheirOwn) {
    const TopData data = frame_data(demo_processes(), false, true, h200_with_tpcs_of_no_gpc());
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    expect_fits(screen);
    SCOPED_TRACE(screen.text());
    EXPECT_EQ(screen.row_text(1), "MPS off · TPCs 62 owned, 4 free of 66 · 3 simulated processes (demo)");
    EXPECT_EQ(screen.row_text(row_starting(screen, "gpc0")),
              "gpc0   │  A 0  A 24         A 8                    A 16       │ A 4");
    EXPECT_EQ(screen.row_text(row_starting(screen, "no GPC")),
              "no GPC │ . 62  . 63  . 64  . 65                               │ 4 free");
    EXPECT_EQ(row_starting(screen, "no GPC"), row_starting(screen, "gpc7") + 1);
    EXPECT_TRUE(contains(screen, "  Findings (4)"));  // the 4 free TPCs are idle
}

TEST(TopLayout, ALongGpuUuidIsClippedBeforeTheClock) {
    TopData data = frame_data(demo_processes());
    data.gpu.uuid = known_fact(std::string("GPU-3ecd459c-0b85-7601-6d1e-4c1b2a3f5e6d"), Provenance{Source::recorded, "test"});
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    const std::string header = screen.row_text(0);
    SCOPED_TRACE(header);
    EXPECT_TRUE(header.ends_with("… 12:00:00"));  // the uuid ends in "…" and a space keeps it off the clock
    EXPECT_TRUE(header.starts_with("gpupart top · GPU 0: NVIDIA H200 Hopper · GPU-3ecd459c"));
}

TEST(TopLayout, At120x40TheFloorplanShowsSmIdsAndTheTableItsMasks) {
    const TopData data = frame_data(demo_processes());
    const Screen screen = layout_top(data, UiState{}, 120, 40);
    expect_fits(screen);
    SCOPED_TRACE(screen.text());
    EXPECT_EQ(floorplan_mode(data, UiState{}, 120, 40), FloorplanMode::tall);
    const int gpc1 = row_starting(screen, "gpc1");
    ASSERT_GE(gpc1, 0);
    EXPECT_EQ(screen.row_text(gpc1), "gpc1    8 TPC  16 SM │    A 1    A 25    A 46     A 9    A 32    A 53            A 17    A 39 │ A 8");
    EXPECT_EQ(screen.row_text(gpc1 + 1), "                     │    2-3   50-51   92-93   18-19   64-65 106-107           34-35   78-79 │");
    EXPECT_TRUE(contains(screen, "MPS off · TPCs 66 owned, 0 free of 66 (132 SMs) · 3 simulated processes (demo) · every 1.0 s"));
    EXPECT_TRUE(contains(screen, "REQUESTED"));
    // The masks (gpc0-3 and gpc4-5: TPC numbers spread over 0-65) are longer than the column: cut, the
    // command keeps its room.
    EXPECT_TRUE(contains(screen, " 0-3,8-11,16-19,24-27… llm-serving (simulated workloa…"));
    EXPECT_TRUE(contains(screen, " 4-5,12-13,20-21,28-2… vision (simulated workload, no…"));
    // Findings are wrapped whole where there is room.
    EXPECT_TRUE(contains(screen, "          by side (gpupart mps start) [no-mps; Bakita & Anderson, RTAS 2024, rule R4]"));
}

TEST(TopLayout, At200x60ASidePanelShowsSharesTheSelectedProcessAndTheFindings) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.selected_pid = 4102;
    const Screen screen = layout_top(data, ui, 200, 60);
    expect_fits(screen);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(contains(screen, "TPC share"));
    EXPECT_TRUE(contains(screen, "B 4102    [|||||||||||||"));
    EXPECT_TRUE(contains(screen, "] 16/66"));
    EXPECT_TRUE(contains(screen, "Selected B 4102"));
    EXPECT_TRUE(contains(screen, "requested  4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57 (16 TPCs, 32 SMs)"));
    EXPECT_TRUE(contains(screen, "applied    4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57"));
    EXPECT_TRUE(contains(screen, "whole GPCs gpc4 gpc5"));
    EXPECT_TRUE(contains(screen, "Findings (3)"));
    // The table has room for every column, each mask at its widest (32 columns: A's, 50 long in TPC numbers,
    // is cut; the side panel and the status line show it whole) and the part of each command that tells the
    // processes apart.
    EXPECT_TRUE(contains(screen, "LAUNCHES"));
    EXPECT_TRUE(contains(screen, "APPLIED"));
    EXPECT_TRUE(contains(screen, " 0-3,8-11,16-19,24-27,32-34,39-4… 0-3,8-11,16-19,24-27,32-34,39-4… llm-serving (simulated workload"));
    EXPECT_TRUE(contains(screen, " batch-train (simulated workload"));
    EXPECT_TRUE(contains(screen, "registry /run/gpupart"));
    // Where the whole command line fits beside every column, it is shown as it is.
    const Screen wider = layout_top(data, ui, 230, 60);
    expect_fits(wider);
    EXPECT_TRUE(contains(wider, " 0-3,8-11,16-19,24-27,32-34,39-4… gpupart-demo-worker llm-serving (simulated workload, no GPU)"))
        << wider.text();
    EXPECT_TRUE(contains(wider, "gpupart-demo-worker batch-train (simulated workload, no GPU)"));
}

TEST(TopLayout, ManyProcessesGetTheCompactFloorplanAndAScrollingTable) {
    std::vector<FakeProcess> fakes;
    const auto tpcs = real_tpcs(h200()).bits();  // TPC numbers 0-65
    for (std::size_t i = 0; i < 12; ++i)
        fakes.push_back({5000 + static_cast<int>(i), fmt::format("{},{}", tpcs[2 * i], tpcs[2 * i + 1]), "worker"});
    const TopData data = frame_data(fakes);
    UiState ui;
    ui.selected_pid = 5011;
    // 80x29 just holds the H200's 8 GPC rows beside 10 process rows and 3 findings: one GPC a line (the
    // table is the point of a top: the TPC numbers only where 10 processes still show).
    EXPECT_EQ(floorplan_mode(data, ui, 80, 29), FloorplanMode::wide);
    const Screen roomy = layout_top(data, ui, 80, 29);
    expect_fits(roomy);
    // Process i holds TPCs 2i and 2i+1: gpc0's slots hold TPCs 0 24 64 8 62 65 - 16 63, of A, E and I.
    EXPECT_TRUE(roomy.row_text(row_starting(roomy, "gpc0")).starts_with("gpc0   │  A 0  . 24  . 64   E 8  . 62  . 65        I 16  . 63 │")) << roomy.text();
    EXPECT_TRUE(contains(roomy, "▸ L    5011"));
    EXPECT_FALSE(contains(roomy, "  A    5000"));
    // One row less and the floorplan goes compact; at 80x24 the table scrolls.
    EXPECT_EQ(floorplan_mode(data, ui, 80, 28), FloorplanMode::compact);
    const Screen screen = layout_top(data, ui, 80, 24);
    expect_fits(screen);
    SCOPED_TRACE(screen.text());
    EXPECT_EQ(floorplan_mode(data, ui, 80, 24), FloorplanMode::compact);
    // Two GPC columns, one cell per TPC in slot order, the floorswept slot blank.
    EXPECT_TRUE(screen.row_text(row_starting(screen, "  gpc0")).starts_with("  gpc0   │ A . . E . .   I . │   gpc4"));
    // The selected last process is scrolled into view.
    EXPECT_TRUE(contains(screen, "▸ L    5011"));
    EXPECT_FALSE(contains(screen, "  A    5000"));
    EXPECT_GT(screen.table_first_row, 0);
}

TEST(TopLayout, SharedTpcsSayTheirFirstHolderAndFreeOnesDots) {
    // a: gpc0's TPCs 0,8,16,24; b: two of them and TPC 1 of gpc1.
    const TopData data = frame_data({{1, "0,8,16,24", "a"}, {2, "1,16,24", "b"}});
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    SCOPED_TRACE(screen.text());
    // gpc0's slots hold TPCs 0 24 64 / 8 62 65 / . 16 63. A shared TPC keeps its first holder's letter,
    // marked '*' (a bare '*' said nobody), and the GPC's summary counts every holder, shortened to fit 80
    // columns on purpose (the floorplan's marks: * shared, . free), never cut.
    EXPECT_EQ(screen.row_text(row_starting(screen, "gpc0")),
              "gpc0   │  A 0 *A 24  . 64   A 8  . 62  . 65       *A 16  . 63 │ A4 B2 *2 .4");
    EXPECT_TRUE(contains(screen, "*A shared (A: 1st holder)"));  // the legend says what it means
    EXPECT_EQ(screen.at(row_starting(screen, "gpc0"), 14).role, Role::overlap);
    EXPECT_TRUE(screen.row_text(row_starting(screen, "gpc1")).starts_with("gpc1   │  B 1  . 25  . 46"));
    EXPECT_TRUE(contains(screen, "share TPCs 16,24"));
}

TEST(TopLayout, MarksTheCursorAndOwnersAreCellAttributes) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.focus = Focus::floorplan;
    ui.cursor_bit = 25;  // gpc1's slots 0-2 hold TPCs 1, 25, 46
    ui.marked.set(46);
    const Screen screen = layout_top(data, ui, 80, 24);
    const int gpc1 = row_starting(screen, "gpc1");
    EXPECT_TRUE(screen.row_text(gpc1).starts_with("gpc1   │  A 1  A 25 +A 46"));
    const std::string row = screen.row_text(gpc1);
    // "gpc1   │" is 8 cells; each TPC cell is 5 wide plus a space: TPC 25 (slot 1) is at column 14.
    EXPECT_TRUE(screen.at(gpc1, 14).reverse);
    EXPECT_FALSE(screen.at(gpc1, 8).reverse);
    EXPECT_TRUE(screen.at(gpc1, 20).underline);
    EXPECT_EQ(screen.at(gpc1, 14).role, Role::owner0);
    const int gpc4 = row_starting(screen, "gpc4");
    EXPECT_EQ(screen.at(gpc4, 10).role, Role::owner1);
    EXPECT_TRUE(screen.row_text(3).starts_with("▸ Floorplan"));
    EXPECT_EQ(screen.row_text(22), "TPC 25 gpc1 SMs 50,51: A 4101 · marked 46 · Enter gives them to A 4101");
    // Clicks land on TPCs by their cells.
    const Hit* hit = screen.hit_at(gpc1, 16);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(hit->kind, HitKind::tpc);
    EXPECT_EQ(hit->value, 25);
}

TEST(TopLayout, ViewOnlyAndEmptyRegistryAreSaid) {
    TopData data = frame_data({});
    data.source.read_only = "this GPU's TPC map is not known";
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_EQ(screen.row_text(2), "view only: this GPU's TPC map is not known");
    EXPECT_TRUE(contains(screen, "no partitioned process: start one with `gpupart run"));
    EXPECT_TRUE(contains(screen, "no finding: nothing to warn about"));
}

TEST(TopLayout, UnreadableSlotsAndAGoneRegistryGetLinesOfTheirOwnAt80x24) {
    TopData data = frame_data(demo_processes());
    data.unreadable_slots = 2;
    data.unreadable_problem = "/run/gpupart/77-1.slot: unknown layout version 9";
    data.registry_problem = "registry /run/gpupart is gone (removed while top ran)";
    const Screen screen = layout_top(data, UiState{}, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(contains(screen, "registry /run/gpupart is gone"));
    EXPECT_TRUE(contains(screen, "2 unreadable slots (their TPCs are unknown)"));
    EXPECT_TRUE(contains(screen, "A    4101"));  // the table is still there
}

TEST(TopLayout, NoControlByteReachesTheFrame) {
    const Screen screen = layout_top(frame_data({{4101, "0-3", "evil \x1b]0;PWNED\a\x1b[2J\r\xc2\x9b\xff"}}), UiState{}, 200, 60);
    SCOPED_TRACE(screen.text());
    for (int row = 0; row < screen.height(); ++row)
        for (int column = 0; column < screen.width(); ++column) {
            const char32_t ch = screen.at(row, column).ch;
            EXPECT_FALSE(ch < 0x20 || (ch >= 0x7f && ch <= 0x9f)) << "row " << row << " column " << column;
        }
    EXPECT_TRUE(contains(screen, "evil \\x1b]0;PWNED\\x07\\x1b[2J\\r\\u{009b}\\xff"));
}

TEST(TopLayout, ASmallTerminalIsToldWhatItNeeds) {
    const Screen screen = layout_top(frame_data(demo_processes()), UiState{}, 50, 10);
    EXPECT_EQ(screen.row_text(0), "gpupart top needs 60x16 at least");
}

TEST(TopLayout, AsciiModeWritesNoOtherGlyph) {
    UiState ui;
    ui.settings.ascii = true;
    ui.dialog = Dialog::help;
    for (const auto& [w, h] : {std::pair{80, 24}, std::pair{120, 40}, std::pair{200, 60}}) {
        const Screen screen = layout_top(frame_data(demo_processes()), ui, w, h);
        for (char c : screen.text()) EXPECT_TRUE(static_cast<unsigned char>(c) < 0x80) << screen.text();
    }
}

TEST(TopLayout, EveryRoleOfTheFloorplanMatchesTheTableLetter) {
    const TopData data = frame_data(demo_processes());
    const Screen screen = layout_top(data, UiState{}, 120, 40);
    const int header = row_starting(screen, "       PID↑");
    for (int i = 0; i < 3; ++i) {
        const Cell& letter = screen.at(header + 1 + i, 2);
        EXPECT_EQ(letter.ch, static_cast<char32_t>('A' + i));
        EXPECT_EQ(letter.role, owner_role(i));
    }
}

// NVML's meters get a header row of their own at every size, each part whole, the clock untouched;
// each process's GPU memory is NVML's; at 60x16 a process row is still visible.
TEST(TopLayout, GpuMetersHaveAHeaderRowAtEverySize) {
    TopData data = frame_data(demo_processes());
    GpuMeters meters;
    meters.gpu_percent = 87;
    meters.memory_used_bytes = 31ull << 30;
    meters.memory_total_bytes = 80ull << 30;
    meters.power_watts = 412.3;
    meters.power_limit_watts = 700;
    meters.sm_clock_mhz = 1755;
    meters.max_sm_clock_mhz = 1980;
    meters.temperature_c = 61;
    meters.process_memory[4102] = 3ull << 30;
    add_meters(data, meters, "");
    const Screen wide = layout_top(data, UiState{}, 120, 40);
    SCOPED_TRACE(wide.text());
    EXPECT_EQ(wide.row_text(2), "GPU 87% · mem 31.0/80.0 GiB · 412/700 W · SM 1755/1980 MHz · 61°C");
    EXPECT_TRUE(contains(wide, " 3072M "));  // B's memory, from NVML
    const Screen small = layout_top(data, UiState{}, 80, 24);
    EXPECT_EQ(small.row_text(2), "GPU 87% · mem 31.0/80.0 GiB · 412/700 W · SM 1755/1980 MHz · 61°C");
    EXPECT_TRUE(small.row_text(0).ends_with("12:00:00"));
    const Screen tiny = layout_top(data, UiState{}, 60, 16);
    SCOPED_TRACE(tiny.text());
    expect_fits(tiny);
    EXPECT_EQ(tiny.row_text(2), "GPU 87% · mem 31.0/80.0 GiB · 412/700 W · SM 1755/1980 MHz");  // the temperature did not fit
    EXPECT_GE(row_starting(tiny, "▸ A"), 0);  // a process row is visible
    EXPECT_TRUE(contains(tiny, "more floorplan rows: a taller terminal shows them"));
}

TEST(TopLayout, WithoutMetersTheHeaderSaysWhyWhereItFits) {
    TopData data = frame_data(demo_processes());
    add_meters(data, std::nullopt, "no GPU meters: NVML has no GPU (a recording)");
    const Screen screen = layout_top(data, UiState{}, 200, 60);
    EXPECT_TRUE(contains(screen, "no GPU meters: NVML has no GPU (a recording)"));
    EXPECT_EQ(screen.row_text(2).find("GPU 87%"), std::string::npos);
}

// CPU% and RSS per process (from /proc) in the table where it is wide enough.
TEST(TopLayout, TheWideTableShowsCpuAndHostMemory) {
    TopData data = frame_data(demo_processes());
    data.processes[0].cpu_percent = 97.4;
    data.processes[0].rss_bytes = 2300ull << 20;
    const Screen screen = layout_top(data, UiState{}, 200, 60);
    SCOPED_TRACE(screen.text());
    const int header = row_starting(screen, "       PID↑ USER");
    ASSERT_GE(header, 0);
    EXPECT_NE(screen.row_text(header).find("  MEM GPU%  CPU%   RSS SHIM"), std::string::npos);
    EXPECT_NE(screen.row_text(header + 1).find("     -    -    97 2300M active"), std::string::npos);
    EXPECT_NE(screen.row_text(header + 2).find("     -    -     -     - active"), std::string::npos);
}

// Item 7: --batch frames are for files and pipes: no cursor mark, no status line, no keys.
TEST(TopLayout, BatchFramesHaveNoInteractiveLines) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.batch = true;
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_FALSE(contains(screen, "F1Help"));
    EXPECT_FALSE(contains(screen, "▸"));
    EXPECT_FALSE(contains(screen, "A 4101 · TPCs"));  // the selected process's status line
    EXPECT_GE(row_starting(screen, "  A    4101"), 0);  // the rows are all there
    EXPECT_GE(row_starting(screen, "  C    4103"), 0);
    ui.batch = false;
    EXPECT_TRUE(contains(layout_top(data, ui, 80, 24), "F1Help"));
}

// The sorted column shows its direction; counts and rates sort highest first when chosen.
TEST(TopLayout, TheSortedColumnShowsItsDirection) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.sort = SortKey::rate;
    ui.sort_descending = sorts_highest_first(ui.sort);
    EXPECT_TRUE(ui.sort_descending);
    const Screen screen = layout_top(data, ui, 80, 24);
    EXPECT_GE(row_starting(screen, "        PID USER     TPCS SMS SHARE LAUNCH/s↓"), 0) << screen.text();
    EXPECT_FALSE(sorts_highest_first(SortKey::pid));
    EXPECT_FALSE(sorts_highest_first(SortKey::command));
}
