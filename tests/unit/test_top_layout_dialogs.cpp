// The dialogs of `gpupart top` laid out: the confirmation of a plan, help, setup, the menus and the prompts.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "controller/rules.hpp"
#include "top/top_layout.hpp"
#include "top/top_view.hpp"
#include "top_screen_text.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

// The text inside the dialog's box (what lies right of its left border, between its top and bottom).
std::string dialog_text(const Screen& screen) {
    std::string text;
    bool inside = false;
    for (int r = 0; r < screen.height(); ++r) {
        const std::string line = screen.row_text(r);
        if (line.find("┌") != std::string::npos) inside = true;
        if (inside && line.find("│") != std::string::npos) text += line.substr(line.find("│")) + "\n";
        if (line.find("└") != std::string::npos) break;
    }
    return text;
}

}  // namespace

TEST(TopLayout, TheConfirmationShowsTheChangesAndOnlyTheFindingsTheyBring) {
    const TopData data = frame_data(demo_processes());
    SystemState state;
    state.gpu = h200();
    for (const TopProcess& p : data.processes) {
        ProcessState ps;
        ps.pid = p.pid;
        ps.start_time = p.start_time;
        ps.command = p.command;
        ps.partitioned = true;
        ps.mask = p.mask;
        state.processes.push_back(ps);
    }
    PlannedChange change;
    change.pid = 4102;
    change.command = data.processes[1].command;
    change.before_partitioned = true;
    change.before = data.processes[1].mask;
    change.after = data.processes[1].mask;
    change.after.set(1);  // two of gpc1's TPCs
    change.after.set(9);
    Plan plan;
    plan.action = "give 1,9 to 4102";
    plan.changes = {change};
    plan.findings = check_plan(state, plan.changes);
    UiState ui;
    ui.dialog = Dialog::confirm;
    ui.pending = PendingPlan{plan, "Give TPCs 1,9 to B 4102?"};
    const Screen screen = layout_top(data, ui, 80, 24);
    expect_fits(screen);
    SCOPED_TRACE(screen.text());
    const std::string dialog = dialog_text(screen);
    EXPECT_TRUE(contains(screen, "┌─ Give TPCs 1,9 to B 4102? "));
    // The counts come first: B's masks are long lists of TPC numbers, cut at this width.
    EXPECT_NE(dialog.find("16 TPCs → 18: 4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57 → 1,4-5,9"), std::string::npos);
    EXPECT_NE(dialog.find("warning: process 4102 gets only 2 of gpc1's 8 TPCs"), std::string::npos);
    EXPECT_NE(dialog.find("share TPCs 1,9"), std::string::npos);       // new: A holds them too
    EXPECT_EQ(dialog.find("without MPS"), std::string::npos);          // held already: counted, not repeated
    EXPECT_NE(dialog.find("(3 findings that hold already: see the findings panel)"), std::string::npos);
    EXPECT_NE(dialog.find("Enter or y applies"), std::string::npos);
}

TEST(TopLayout, ARefusedPlanSaysNothingWillChange) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.dialog = Dialog::confirm;
    Plan plan;
    plan.findings = {{Severity::error, "controller", "process 4101 has one TPC left: a partition needs at least one", "last-tpc"}};
    ui.pending = PendingPlan{plan, "Take a TPC from A 4101?"};
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(contains(screen, "error: process 4101 has one TPC left"));
    EXPECT_TRUE(contains(screen, "Refused: nothing will change."));
    EXPECT_FALSE(contains(screen, "Enter or y applies"));
}

TEST(TopLayout, AnUndoOfRulesAloneSaysWhichRulesComeBack) {
    const TopData data = frame_data(demo_processes());
    gpupart_rules_file armed{};
    std::snprintf(armed.profile, sizeof armed.profile, "%s", "serving");
    armed.count = 2;
    Plan plan;
    plan.action = "undo #3 (profile disarm)";
    plan.undoes = 3;
    plan.rules = RulesChange{std::nullopt, armed};
    UiState ui;
    ui.dialog = Dialog::confirm;
    ui.pending = PendingPlan{plan, "Undo #3 (profile disarm)?"};
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    const std::string dialog = dialog_text(screen);
    EXPECT_NE(dialog.find("rules for processes that start later: no rules → profile serving (2 rules)"), std::string::npos);
    EXPECT_EQ(dialog.find("no change to make"), std::string::npos);
    // There is no redo: the dialog must not promise that u undoes the undo.
    EXPECT_NE(dialog.find("Enter or y undoes it"), std::string::npos);
    EXPECT_NE(dialog.find("no redo"), std::string::npos);
    EXPECT_EQ(dialog.find("u undoes it later"), std::string::npos);
}

TEST(TopLayout, HelpSetupSortAndActionDialogs) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.dialog = Dialog::help;
    Screen screen = layout_top(data, ui, 80, 24);
    EXPECT_TRUE(contains(screen, "gpupart top · keys"));
    EXPECT_TRUE(contains(screen, "u          undo your last change"));
    EXPECT_TRUE(contains(screen, "any key closes this help"));  // the whole help fits 80x24
    ui.dialog = Dialog::setup;
    screen = layout_top(data, ui, 80, 24);
    EXPECT_TRUE(contains(screen, "[x] colours"));
    EXPECT_TRUE(contains(screen, "refresh every 1.0 s"));
    ui.dialog = Dialog::sort_menu;
    screen = layout_top(data, ui, 80, 24);
    EXPECT_TRUE(contains(screen, "PID   (now)"));
    ui.dialog = Dialog::action_menu;
    ui.marked.set(9);
    screen = layout_top(data, ui, 120, 40);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(contains(screen, "1  Give marked TPCs 9 to 4101 (A)"));
    EXPECT_TRUE(contains(screen, "3  Release 9 (held by nobody then)"));
    EXPECT_TRUE(contains(screen, "6  Undo your last change"));
    // Only the dialog takes clicks while it is open.
    for (const Hit& hit : screen.hits) EXPECT_EQ(hit.kind, HitKind::menu_item);
}

// The menus do not offer a change that changes nothing.
TEST(TopLayout, TheActionMenuDoesNotOfferChangesThatChangeNothing) {
    // As `gpupart demo start` runs it: A (selected) holds gpc0-3, B gpc4-5, C gpc6; gpc7 is free.
    std::vector<FakeProcess> fakes = demo_processes();
    fakes[2].tpcs = "gpc6";
    const TopData data = frame_data(fakes);
    UiState ui;
    ui.marked.set(9);  // A's own TPC
    auto items = action_menu(data, ui);
    EXPECT_FALSE(items[0].enabled);
    EXPECT_TRUE(items[2].enabled);  // 9 is held: releasing it changes something
    ui.marked = TpcMask{};
    ui.marked.set(7);  // of gpc7: held by nobody
    items = action_menu(data, ui);
    EXPECT_TRUE(items[0].enabled);
    EXPECT_FALSE(items[2].enabled);
}

TEST(TopLayout, SearchAndFilterPromptsLiveInTheStatusLine) {
    const TopData data = frame_data(demo_processes());
    UiState ui;
    ui.dialog = Dialog::filter;
    ui.input = ui.filter = "vision";
    const Screen screen = layout_top(data, ui, 80, 24);
    SCOPED_TRACE(screen.text());
    EXPECT_TRUE(screen.row_text(22).starts_with("Filter: vision_"));
    EXPECT_TRUE(contains(screen, "▸ B    4102"));
    EXPECT_FALSE(contains(screen, "A    4101"));
}
