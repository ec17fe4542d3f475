// What keys and clicks do in `gpupart top`, on hand-made frames: the UI state they change and the
// intents (plans, apply, undo, quit) they hand to the session.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "top/top_input.hpp"
#include "top/top_layout.hpp"
#include "top/top_view.hpp"
#include "top_test_data.hpp"
#include "top_test_keys.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

TEST(TopInput, TabSwitchesFocusAndArrowsMoveOverRealTpcsOnly) {
    Keys k;
    EXPECT_EQ(k.ui.focus, Focus::table);
    k.press(KeyCode::tab);
    EXPECT_EQ(k.ui.focus, Focus::floorplan);
    EXPECT_EQ(cursor_bit(k.data, k.ui), 0);
    // gpc0's slots hold TPCs 0 24 64 8 62 65 . 16 63: Right walks them in slot order.
    for (int i = 0; i < 5; ++i) k.press(KeyCode::right);
    EXPECT_EQ(k.ui.cursor_bit, 65);
    k.press(KeyCode::right);
    EXPECT_EQ(k.ui.cursor_bit, 16);  // the floorswept slot 6 is never a stop
    for (int i = 0; i < 2; ++i) k.press(KeyCode::right);
    EXPECT_EQ(k.ui.cursor_bit, 63);  // the row's last TPC: Right stays
    k.press(KeyCode::left);
    k.press(KeyCode::down);
    EXPECT_EQ(k.ui.cursor_bit, 17);  // the same slot (7) in gpc1
    k.press(KeyCode::home);
    EXPECT_EQ(k.ui.cursor_bit, 1);
    k.press(KeyCode::end);
    EXPECT_EQ(k.ui.cursor_bit, 39);
    k.press(KeyCode::page_down);
    EXPECT_EQ(k.ui.cursor_bit, 61);  // the last row (gpc7), nearest slot
    k.press(KeyCode::home);
    EXPECT_EQ(k.ui.cursor_bit, 7);
    k.press(KeyCode::page_up);
    EXPECT_EQ(k.ui.cursor_bit, 0);
    k.press(KeyCode::back_tab);
    EXPECT_EQ(k.ui.focus, Focus::table);
}

// A GPU whose source gave no GPC for some TPCs: their row after the GPCs is walked like the others, and g
// marks the whole row.
TEST(TopInput, TheRowOfTpcsOfNoKnownGpcIsWalkedAndMarkedToo) {
    Keys k = keys_over(frame_data(demo_processes(), false, true, h200_with_tpcs_of_no_gpc()));
    k.press(KeyCode::tab);
    EXPECT_EQ(cursor_bit(k.data, k.ui), 0);
    k.press(KeyCode::end);
    EXPECT_EQ(k.ui.cursor_bit, 16);  // gpc0 keeps TPCs 0 24 . 8 . . . 16 . here
    k.press(KeyCode::page_down);
    EXPECT_EQ(k.ui.cursor_bit, 65);  // the row of TPCs of no known GPC, nearest slot
    k.press(KeyCode::home);
    EXPECT_EQ(k.ui.cursor_bit, 62);
    k.press('g');
    EXPECT_EQ(k.ui.marked.to_list(), "62-65");
}

TEST(TopInput, SpaceMarksGMarksAGpcEscClears) {
    Keys k;
    k.press(KeyCode::tab);
    k.press(KeyCode::down);  // TPC 1, slot 0 of gpc1
    k.press(' ');
    k.press(KeyCode::right);
    k.press(' ');
    EXPECT_EQ(k.ui.marked.to_list(), "1,25");  // slot 1 of gpc1 holds TPC 25
    k.press(' ');
    EXPECT_EQ(k.ui.marked.to_list(), "1");
    k.press('g');
    EXPECT_EQ(k.ui.marked.to_list(), "1,9,17,25,32,39,46,53");  // gpc1's TPCs
    k.press('g');
    EXPECT_TRUE(k.ui.marked.empty());
    k.press('g');
    k.press(KeyCode::escape);
    EXPECT_TRUE(k.ui.marked.empty());
}

TEST(TopInput, EnterGivesTheMarkedTpcsToTheSelectedProcess) {
    Keys k;
    k.press(KeyCode::down);  // select B
    k.press(KeyCode::tab);
    k.press(KeyCode::down);
    k.press('g');            // gpc1
    const Intent intent = k.press(KeyCode::enter);
    EXPECT_EQ(intent.kind, IntentKind::give);
    EXPECT_EQ(intent.target.pid, 4102);
    EXPECT_EQ(intent.target.start_time, 1000u + 4102u);  // the process as the table showed it
    EXPECT_EQ(intent.tpcs.to_list(), "1,9,17,25,32,39,46,53");
    // Nothing marked: the TPC under the cursor.
    k.press(KeyCode::escape);
    EXPECT_EQ(k.press(KeyCode::enter).tpcs.to_list(), "1");
}

TEST(TopInput, PlusAndMinusActOnTheTaggedProcessesOrTheSelectedOne) {
    Keys k;
    Intent grow = k.press('+');
    EXPECT_EQ(grow.kind, IntentKind::grow);
    ASSERT_EQ(grow.targets.size(), 1u);
    EXPECT_EQ(grow.targets[0].pid, 4101);
    EXPECT_NE(grow.targets[0].start_time, 0u);  // the process as the user saw it, not a bare pid
    k.press(' ');  // tags A and steps to B, as htop does
    EXPECT_EQ(k.ui.selected_pid, 4102);
    k.press(KeyCode::down);
    k.press(' ');  // tags C
    const Intent shrink = k.press('-');
    EXPECT_EQ(shrink.kind, IntentKind::shrink);
    ASSERT_EQ(shrink.targets.size(), 2u);
    EXPECT_EQ(shrink.targets[0].pid, 4101);
    EXPECT_EQ(shrink.targets[1].pid, 4103);
}

TEST(TopInput, SortFilterAndSearch) {
    Keys k;  // 120x40: every column but APPLIED is shown
    k.data.processes[1].launches_per_second = 900;
    k.press('>');
    EXPECT_EQ(k.ui.sort, SortKey::user);
    k.press('<');
    k.press('<');
    EXPECT_EQ(k.ui.sort, k.last.table_columns.back());  // wraps to the last column shown
    EXPECT_EQ(k.ui.sort, SortKey::command);
    k.press(KeyCode::f6);
    EXPECT_EQ(k.ui.dialog, Dialog::sort_menu);
    const auto rate_at = std::find(k.last.table_columns.begin(), k.last.table_columns.end(), SortKey::rate) - k.last.table_columns.begin();
    while (k.ui.menu_item != rate_at) k.press(KeyCode::up);
    k.press(KeyCode::enter);
    EXPECT_EQ(k.ui.sort, SortKey::rate);
    EXPECT_EQ(visible_processes(k.data, k.ui).front()->pid, 4102);  // a rate sorts highest first, as in htop
    k.press('I');
    EXPECT_NE(visible_processes(k.data, k.ui).front()->pid, 4102);

    k.press('\\');
    for (char32_t c : std::u32string(U"train")) k.press(c);
    EXPECT_EQ(k.ui.filter, "train");
    ASSERT_EQ(visible_processes(k.data, k.ui).size(), 1u);
    k.press(KeyCode::escape);  // Esc in the filter prompt drops the filter
    EXPECT_EQ(visible_processes(k.data, k.ui).size(), 3u);

    k.press('/');
    for (char32_t c : std::u32string(U"vis")) k.press(c);
    EXPECT_EQ(k.ui.selected_pid, 4102);
    k.press(KeyCode::enter);
    EXPECT_EQ(k.ui.search, "vis");
    k.press('/');
    k.press('z');
    EXPECT_TRUE(k.ui.message_is_error);
    EXPECT_EQ(k.ui.message, "no process matches 'z'");
}

// Every column the table shows can be sorted by, with < >, F6 or a click on its title;
// those a width hides are not offered (sorting by what cannot be seen would look like no order at all).
TEST(TopInput, EveryShownColumnCanBeSortedByAndNoHiddenOne) {
    Keys k;
    k.last = layout_top(k.data, k.ui, 80, 24);
    const std::vector<SortKey> narrow = {SortKey::pid,  SortKey::user,   SortKey::tpcs, SortKey::sms,    SortKey::share,
                                         SortKey::rate, SortKey::memory, SortKey::shim, SortKey::command};
    ASSERT_EQ(k.last.table_columns, narrow);
    std::vector<SortKey> seen;
    for (std::size_t i = 0; i < narrow.size(); ++i) {
        k.ui.dialog = Dialog::none;
        handle_key(k.ui, k.data, k.last, char_key('>'));
        k.last = layout_top(k.data, k.ui, 80, 24);
        seen.push_back(k.ui.sort);
        EXPECT_EQ(k.ui.sort_descending, sorts_highest_first(k.ui.sort));
    }
    EXPECT_EQ(seen.back(), SortKey::pid);  // round the nine columns and back
    EXPECT_EQ(std::set<SortKey>(seen.begin(), seen.end()), std::set<SortKey>(narrow.begin(), narrow.end()));
    // F6 lists the same nine; the sorted column is offered too where the width hides it.
    handle_key(k.ui, k.data, k.last, code_key(KeyCode::f6));
    const Screen menu = layout_top(k.data, k.ui, 80, 24);
    EXPECT_EQ(std::count_if(menu.hits.begin(), menu.hits.end(), [](const Hit& hit) { return hit.kind == HitKind::menu_item; }), 9);
    EXPECT_EQ(menu.text().find("CPU%"), std::string::npos) << "not shown at 80 columns, so not offered\n" << menu.text();
    EXPECT_EQ(menu.text().find("LAUNCHES"), std::string::npos) << menu.text();
    EXPECT_NE(menu.text().find("PID   (now)"), std::string::npos) << menu.text();  // '>' went round once
    EXPECT_NE(menu.text().find("MEM "), std::string::npos) << menu.text();
    k.ui.dialog = Dialog::none;
    k.ui.sort = SortKey::rss;  // chosen at 200 columns, then the terminal narrowed
    handle_key(k.ui, k.data, k.last, code_key(KeyCode::f6));
    EXPECT_NE(layout_top(k.data, k.ui, 80, 24).text().find("RSS   (now) (not shown at this width)"), std::string::npos);
}

TEST(TopInput, AClickOnAColumnTitleSortsByItAndAgainInverts) {
    Keys k;
    k.data.processes[0].memory_bytes = 12ull << 20;
    k.data.processes[2].memory_bytes = 95ull << 20;  // B has none: below every figure
    const int header = [&] {
        for (const Hit& hit : k.last.hits)
            if (hit.kind == HitKind::sort_column) return hit.row;
        return -1;
    }();
    ASSERT_GE(header, 0);
    const int mem_column = static_cast<int>(k.last.row_text(header).find(" MEM ")) + 2;
    ASSERT_GT(mem_column, 2) << k.last.row_text(header);
    k.press(click(header, mem_column));
    EXPECT_EQ(k.ui.sort, SortKey::memory);
    EXPECT_TRUE(k.ui.sort_descending);
    auto order = visible_processes(k.data, k.ui);
    EXPECT_EQ(order[0]->pid, 4103);
    EXPECT_EQ(order[1]->pid, 4101);
    EXPECT_EQ(order[2]->pid, 4102);
    EXPECT_NE(k.last.row_text(header).find("MEM↓"), std::string::npos) << k.last.row_text(header);
    k.press(click(header, mem_column));
    EXPECT_FALSE(k.ui.sort_descending);
    EXPECT_EQ(visible_processes(k.data, k.ui).front()->pid, 4102);
    k.press(click(header, 1));  // left of the titles: the sort menu
    EXPECT_EQ(k.ui.dialog, Dialog::sort_menu);
}

TEST(TopInput, ClicksSelectTpcsProcessesAndKeys) {
    Keys k;
    // Find where the layout put TPC 20 and process C, then click there.
    const Hit* tpc = nullptr;
    const Hit* row = nullptr;
    const Hit* help = nullptr;
    for (const Hit& hit : k.last.hits) {
        if (hit.kind == HitKind::tpc && hit.value == 20 && !tpc) tpc = &hit;
        if (hit.kind == HitKind::process && hit.value == 4103) row = &hit;
        if (hit.kind == HitKind::key && hit.value == static_cast<int>(KeyCode::f1)) help = &hit;
    }
    ASSERT_TRUE(tpc && row && help);
    const Hit tpc_hit = *tpc, row_hit = *row, help_hit = *help;
    k.press(click(tpc_hit.row, tpc_hit.column + 1));
    EXPECT_EQ(k.ui.focus, Focus::floorplan);
    EXPECT_EQ(k.ui.cursor_bit, 20);
    EXPECT_TRUE(k.ui.marked.test(20));
    k.press(click(row_hit.row, 30));
    EXPECT_EQ(k.ui.focus, Focus::table);
    EXPECT_EQ(k.ui.selected_pid, 4103);
    k.press(click(help_hit.row, help_hit.column));
    EXPECT_EQ(k.ui.dialog, Dialog::help);
}

TEST(TopInput, PagesMoveByWhatTheTableShowed) {
    std::vector<FakeProcess> fakes;
    for (int i = 0; i < 30; ++i) fakes.push_back({6000 + i, "all", "worker"});
    Keys k;
    k.data = frame_data(fakes);
    k.last = layout_top(k.data, k.ui, 80, 24);
    const int page = k.last.table_rows;
    ASSERT_GT(page, 2);
    k.press(KeyCode::page_down);
    EXPECT_EQ(k.ui.selected_pid, 6000 + page - 1);
    k.press(KeyCode::end);
    EXPECT_EQ(k.ui.selected_pid, 6029);
    k.press(KeyCode::home);
    EXPECT_EQ(k.ui.selected_pid, 6000);
}
