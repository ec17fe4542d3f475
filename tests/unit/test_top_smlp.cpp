// `gpupart top` and programs that partition themselves, on hand-made frames: a program that chooses its own masks (libgpupart.so) is
// marked in the table and its masks are in its details and status line (chosen → what they run on under
// the operator's mask); the SMLP components view (x) shows each component's holders and queues; the
// floorplan's cursor says which SMLP request holds its TPC.
#include <gtest/gtest.h>

#include <unistd.h>

#include "smlp/smlp_file.hpp"
#include "top/top_input.hpp"
#include "top/top_layout.hpp"
#include "top/top_view.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

bool contains(const Screen& screen, const std::string& text) { return screen.text().find(text) != std::string::npos; }

int row_with(const Screen& screen, const std::string& text) {
    for (int r = 0; r < screen.height(); ++r)
        if (screen.row_text(r).find(text) != std::string::npos) return r;
    return -1;
}

// llm-serving (A, gpc0-3) chooses a global mask and two stream masks, one of them outside its partition
// (TPCs 4, 12, 20, 28: gpc4's).
std::vector<FakeProcess> with_app_masks() {
    auto fakes = demo_processes();
    SlotAppMasks& app = fakes[0].app;
    app.in_use = true;
    app.global_set = true;
    app.global_disable = ~TpcMask::range(0, 3);
    TpcMask of_gpc4;
    for (const int tpc : {4, 12, 20, 28}) of_gpc4.set(tpc);
    app.streams = {{0x7f0000001000ull, ~TpcMask::range(0, 1), 40}, {0x7f0000002000ull, ~of_gpc4, 41}};
    app.app_launches = 120;
    app.outside_bound = 41;
    return fakes;
}

SmlpRequest request(gpupart_smlp_queue queue, int pid, int priority, std::uint64_t ticket, const std::string& label, TpcMask granted = {}) {
    SmlpRequest r;
    r.queue = queue;
    r.record = static_cast<int>(ticket);
    r.pid = pid;
    r.tid = pid;
    r.priority = priority;
    r.ticket = ticket;
    r.label = label;
    r.granted = granted;
    r.granted_tpcs = static_cast<unsigned>(granted.count());
    r.issued_ns = 1'000'000'000;
    r.satisfied_ns = queue == GPUPART_SMLP_SQ ? 1'500'000'000 : 0;
    return r;
}

// A component on gpc1 (TPCs 9-16) of the demo: A (4101) holds 9-12, a process outside the table holds
// 13-14 and has died, B (4102) waits in the FQ, a third request in the PQ.
SmlpEntry camera_component() {
    SmlpComponent c;
    c.path = "/run/gpupart/u0/camera.smlp";
    c.name = "camera";
    c.gpu = gpu_key(h200());
    c.tpcs = TpcMask::range(9, 16);
    c.size = 8;
    c.granularity = 2;
    c.fq_length = 2;
    c.satisfied = 5;
    c.sq = {request(GPUPART_SMLP_SQ, 4101, 5, 1, "detect", TpcMask::range(9, 12)),
            request(GPUPART_SMLP_SQ, 999999, 3, 2, "\x1b[31mtrack", TpcMask::range(13, 14))};
    c.sq[0].inheritance = GPUPART_SMLP_INHERIT_REFUSED;
    c.sq[0].inherited_priority = 9;
    c.sq[1].liveness = Liveness::gone;
    c.fq = {request(GPUPART_SMLP_FQ, 4102, 9, 3, "plan")};
    c.pq = {request(GPUPART_SMLP_PQ, 4103, 1, 4, "batch")};
    c.free = TpcMask::range(15, 16);
    return {c.path, c, ""};
}

TopData frame_with_smlp() {
    TopData data = frame_data(demo_processes());
    add_smlp(data, {camera_component(), {"/run/gpupart/u0/bad.smlp", std::nullopt, "/run/gpupart/u0/bad.smlp: is a FIFO"}}, 3'500'000'000);
    return data;
}

}  // namespace

TEST(TopAppMasks, TheTableMarksProgramsThatChooseTheirOwnMasks) {
    const TopData plain = frame_data(demo_processes());
    EXPECT_FALSE(contains(layout_top(plain, UiState{}, 120, 40), " APP "));  // no column of "-" before any program uses it
    const TopData data = frame_data(with_app_masks());
    for (const auto& [width, height] : {std::pair{80, 24}, std::pair{120, 40}}) {
        const Screen screen = layout_top(data, UiState{}, width, height);
        SCOPED_TRACE(screen.text());
        const int header = row_with(screen, "PID");
        ASSERT_GE(header, 0);
        EXPECT_NE(screen.row_text(header).find(" APP SHIM"), std::string::npos);
        EXPECT_NE(screen.row_text(row_with(screen, "llm-serving")).find(" yes active"), std::string::npos);
        EXPECT_NE(screen.row_text(row_with(screen, "vision")).find(" -   active"), std::string::npos);
    }
    // APP sorts programs with their own masks first, as a column of the table.
    UiState ui;
    ui.sort = SortKey::app;
    ui.sort_descending = sorts_highest_first(SortKey::app);
    EXPECT_EQ(visible_processes(data, ui).front()->pid, 4101);
    EXPECT_EQ(sort_key_named("app"), SortKey::app);
}

TEST(TopAppMasks, DetailsShowBothMasksAndWhatEachChoiceRunsOn) {
    const TopData data = frame_data(with_app_masks());
    const TopProcess& a = data.processes.front();
    ASSERT_TRUE(a.app_masks);
    EXPECT_EQ(a.app_summary, "global 0-3 · 2 stream masks · 120 launches chose their mask (41 outside the operator's mask)");
    ASSERT_EQ(a.app_lines.size(), 3u);
    EXPECT_EQ(a.app_lines[0].text, "global 0-3 → 0-3");
    EXPECT_EQ(a.app_lines[1].text, "stream 0x7f0000001000 0-1 → 0-1 · 40 launches");
    EXPECT_EQ(a.app_lines[2].text,
              "stream 0x7f0000002000 4,12,20,28 → 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 (none inside the operator's mask: "
              "runs on it) · 41 launches");
    EXPECT_TRUE(a.app_lines[2].outside_bound);
    // 200x60: the side panel's selected process carries them under its requested mask; the outside one in red.
    const Screen wide = layout_top(data, UiState{}, 200, 60);
    SCOPED_TRACE(wide.text());
    const int program = row_with(wide, "program    global 0-3 · 2 stream masks");
    ASSERT_GE(program, 0);
    EXPECT_GE(row_with(wide, "requested  0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65"), 0);
    EXPECT_NE(wide.row_text(program + 1).find("global 0-3 → 0-3"), std::string::npos);
    const int outside = row_with(wide, "stream 0x7f0000002000 4,12,20,28 →");
    ASSERT_GE(outside, 0);
    const std::string outside_text = wide.row_text(outside);
    const int column = text_width(outside_text.substr(0, outside_text.find("stream 0x7f0000002000")));
    EXPECT_EQ(wide.at(outside, column).role, Role::bad);
    // 80x24 has no side panel: the status line says it.
    const Screen narrow = layout_top(data, UiState{}, 80, 24);
    EXPECT_NE(narrow.row_text(22).find("program: global 0-3"), std::string::npos) << narrow.row_text(22);
}

TEST(TopSmlp, TheComponentsViewShowsHoldersAndQueuesInOrder) {
    const TopData data = frame_with_smlp();
    UiState ui;
    ui.dialog = Dialog::smlp;
    const Screen screen = layout_top(data, ui, 120, 40);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(contains(screen, "SMLP components (1) · live · gpupart smlp lists the same"));
    EXPECT_TRUE(contains(screen, "camera (root) · this GPU · TPCs 9-16 · H 8 h 2 M 2"));
    // The strip: A's letter on 9-12, the dead holder's mark on 13-14 (1: not a process of the table), 15-16 free.
    const int strip = row_with(screen, "held  ");
    ASSERT_GE(strip, 0);
    EXPECT_NE(screen.row_text(strip).find("held  AAAA11..   free 15-16"), std::string::npos) << screen.row_text(strip);
    const std::string strip_text = screen.row_text(strip);
    const int a_mark = text_width(strip_text.substr(0, strip_text.find("AAAA")));
    EXPECT_EQ(screen.at(strip, a_mark).role, owner_role(data.processes.front().colour));
    EXPECT_EQ(screen.at(strip, a_mark + 4).role, Role::bad);  // its holder died: red until the sweep
    // SQ, then FQ, then PQ, each with its request; labels escaped; what Rule 3 could not do, and the dead holder.
    const int sq = row_with(screen, "SQ A    4101");
    const int dead = row_with(screen, "SQ 1  999999");
    const int fq = row_with(screen, "FQ B    4102");  // a waiter of the table: its letter, dim
    const int pq = row_with(screen, "PQ C    4103");
    ASSERT_GE(sq, 0);
    EXPECT_GT(dead, sq);
    EXPECT_GT(fq, dead);
    EXPECT_GT(pq, fq);
    EXPECT_NE(screen.row_text(sq).find("TPCs 9-12"), std::string::npos);
    EXPECT_NE(screen.row_text(sq).find("held 2.0 s"), std::string::npos) << screen.row_text(sq);
    EXPECT_NE(screen.row_text(sq).find("inheritance of priority 9 refused by"), std::string::npos);
    EXPECT_NE(screen.row_text(dead).find("\\x1b[31mtrack"), std::string::npos) << screen.row_text(dead);
    EXPECT_NE(screen.row_text(dead).find("exited: freed at the next change"), std::string::npos);
    EXPECT_NE(screen.row_text(fq).find("waits 2.5 s"), std::string::npos) << screen.row_text(fq);
    EXPECT_TRUE(contains(screen, "? /run/gpupart/u0/bad.smlp: is a FIFO"));
}

TEST(TopSmlp, XOpensTheViewArrowsScrollItAndEscClosesIt) {
    TopData data = frame_with_smlp();
    for (int i = 0; i < 12; ++i) {
        SmlpEntry more = camera_component();
        more.component->name = "component-" + std::to_string(i);
        data.smlp.push_back(more);
    }
    UiState ui;
    EXPECT_NE(layout_top(data, ui, 120, 40).row_text(1).find(" · 13 SMLP components (x)"), std::string::npos);
    Screen last = layout_top(data, ui, 80, 24);
    handle_key(ui, data, last, char_key('x'));
    ASSERT_EQ(ui.dialog, Dialog::smlp);
    last = layout_top(data, ui, 80, 24);
    EXPECT_GT(last.findings_lines, last.findings_rows);
    handle_key(ui, data, last, code_key(KeyCode::end));
    last = layout_top(data, ui, 80, 24);
    EXPECT_EQ(last.findings_first_line, last.findings_lines - last.findings_rows);
    EXPECT_NE(last.text().find("component-11"), std::string::npos);
    handle_key(ui, data, last, code_key(KeyCode::escape));
    EXPECT_EQ(ui.dialog, Dialog::none);
    handle_key(ui, data, last, char_key('x'));
    handle_key(ui, data, last, char_key('x'));  // its own key closes it too
    EXPECT_EQ(ui.dialog, Dialog::none);
    // The help says where it is.
    ui.dialog = Dialog::help;
    EXPECT_NE(layout_top(data, ui, 80, 24).text().find("x  SMLP components: queues, holders"), std::string::npos);
}

TEST(TopSmlp, TheFloorplanCursorSaysWhoHoldsItsTpc) {
    const TopData data = frame_with_smlp();
    UiState ui;
    ui.focus = Focus::floorplan;
    ui.cursor_bit = 10;
    Screen screen = layout_top(data, ui, 120, 40);
    EXPECT_NE(screen.row_text(38).find("SMLP camera: held by 4101 (detect)"), std::string::npos) << screen.row_text(38);
    ui.cursor_bit = 15;
    screen = layout_top(data, ui, 120, 40);
    EXPECT_NE(screen.row_text(38).find("SMLP camera: free"), std::string::npos) << screen.row_text(38);
    ui.cursor_bit = 0;  // not the component's
    screen = layout_top(data, ui, 120, 40);
    EXPECT_EQ(screen.row_text(38).find("SMLP"), std::string::npos) << screen.row_text(38);
}
