// What keys do in the menus and dialogs of `gpupart top`: actions, confirmation, findings, help, setup, quit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "top/top_view.hpp"
#include "top_test_data.hpp"
#include "top_test_keys.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

// Htop's k kills; gpupart top sends no signal and says so, and where its actions are.
TEST(TopInput, KSaysItSendsNoSignal) {
    Keys k;
    EXPECT_EQ(k.press('k').kind, IntentKind::none);
    EXPECT_TRUE(k.ui.message_is_error);
    EXPECT_NE(k.ui.message.find("sends no signal"), std::string::npos) << k.ui.message;
    EXPECT_NE(k.ui.message.find("F9"), std::string::npos) << k.ui.message;
    EXPECT_EQ(k.ui.dialog, Dialog::none);
}

// F opens every finding whole; arrows and pages scroll it; Esc closes it.
TEST(TopInput, TheFindingsViewScrollsAndCloses) {
    Keys k;
    for (int i = 0; i < 60; ++i)
        k.data.findings.push_back({Severity::info, "test", fmt::format("finding number {} of a long list", i), "test-id"});
    k.press('f');
    ASSERT_EQ(k.ui.dialog, Dialog::findings_list);
    EXPECT_EQ(k.last.findings_first_line, 0);
    EXPECT_GT(k.last.findings_lines, k.last.findings_rows);
    k.press(KeyCode::down);
    EXPECT_EQ(k.last.findings_first_line, 1);
    k.press(KeyCode::page_down);
    EXPECT_EQ(k.last.findings_first_line, 1 + k.last.findings_rows - 1);
    k.press(KeyCode::end);
    EXPECT_EQ(k.last.findings_first_line, k.last.findings_lines - k.last.findings_rows);
    EXPECT_NE(k.last.text().find("finding number 59 of a long list"), std::string::npos);
    k.press(KeyCode::page_down);  // no further than the end
    EXPECT_EQ(k.last.findings_first_line, k.last.findings_lines - k.last.findings_rows);
    k.press(KeyCode::home);
    EXPECT_EQ(k.last.findings_first_line, 0);
    k.press(KeyCode::page_up);  // nor before the start
    EXPECT_EQ(k.last.findings_first_line, 0);
    k.press(KeyCode::escape);
    EXPECT_EQ(k.ui.dialog, Dialog::none);
    k.press('f');
    k.press('q');  // q closes the view, it does not quit
    EXPECT_EQ(k.ui.dialog, Dialog::none);
}

// Releasing free TPCs or giving a process TPCs it holds would change nothing; they are not offered.
TEST(TopInput, TheActionMenuDoesNotOfferChangesThatChangeNothing) {
    // As `gpupart demo start` runs it: A 4101 (gpc0-3) selected, B gpc4-5, C gpc6, gpc7 free; the cursor
    // on TPC 0 (gpc0).
    std::vector<FakeProcess> fakes = demo_processes();
    fakes[2].tpcs = "gpc6";
    Keys k = keys_over(frame_data(fakes));
    const auto enabled = [&](MenuAction action) {
        for (const MenuItem& item : action_menu(k.data, k.ui))
            if (item.action == action) return item.enabled;
        ADD_FAILURE() << "no such item";
        return false;
    };
    EXPECT_FALSE(enabled(MenuAction::give_gpc));  // gpc0 is A's already
    EXPECT_TRUE(enabled(MenuAction::release));    // TPC 0 is A's
    k.ui.marked = TpcMask::range(0, 3);
    EXPECT_FALSE(enabled(MenuAction::give_marked));
    k.ui.marked.set(7);  // gpc7's, free: giving it changes something
    EXPECT_TRUE(enabled(MenuAction::give_marked));
    k.ui.marked = TpcMask{};
    k.ui.marked.set(7);  // two of gpc7's TPCs
    k.ui.marked.set(31);
    EXPECT_FALSE(enabled(MenuAction::release));  // held by nobody already
    k.press(KeyCode::f9);
    EXPECT_EQ(k.press('3').kind, IntentKind::none);
    EXPECT_TRUE(k.ui.message_is_error);
    EXPECT_NE(k.ui.message.find("would change nothing"), std::string::npos);
}

// Enter on a finding shows its entry of docs/rules.md (what it means, why, what to do).
TEST(TopInput, EnterOnAFindingShowsWhatItMeans) {
    Keys k;  // MPS off, three processes: no-mps among the findings
    ASSERT_FALSE(k.data.findings.empty());
    k.press(KeyCode::tab);
    EXPECT_EQ(k.ui.focus, Focus::floorplan);
    k.press(KeyCode::tab);
    EXPECT_EQ(k.ui.focus, Focus::findings);
    EXPECT_NE(k.ui.message.find("finding 1 of"), std::string::npos);
    std::size_t no_mps = 0;
    while (no_mps < k.data.findings.size() && k.data.findings[no_mps].id != "no-mps") ++no_mps;
    ASSERT_LT(no_mps, k.data.findings.size());
    for (std::size_t i = 0; i < no_mps; ++i) k.press(KeyCode::down);
    EXPECT_NE(k.ui.message.find("no-mps"), std::string::npos);
    k.press(KeyCode::enter);
    EXPECT_EQ(k.ui.dialog, Dialog::finding);
    const std::string text = k.last.text();
    EXPECT_NE(text.find("Finding no-mps"), std::string::npos) << text;
    EXPECT_NE(text.find("gpupart mps start"), std::string::npos) << text;
    EXPECT_NE(text.find("RTAS 2024, rule R4"), std::string::npos) << text;
    k.press('x');  // any key closes it
    EXPECT_EQ(k.ui.dialog, Dialog::none);
    k.press(KeyCode::tab);
    EXPECT_EQ(k.ui.focus, Focus::table);
}

TEST(TopInput, TheActionMenuAndTheConfirmation) {
    Keys k;
    k.press(KeyCode::f9);
    EXPECT_EQ(k.ui.dialog, Dialog::action_menu);
    EXPECT_EQ(k.press('1').kind, IntentKind::none);  // nothing marked: disabled
    EXPECT_TRUE(k.ui.message_is_error);
    k.press(KeyCode::f9);
    EXPECT_EQ(k.press('6').kind, IntentKind::undo);
    k.press(KeyCode::f9);
    k.press(KeyCode::down);
    k.press(KeyCode::down);
    const Intent release = k.press(KeyCode::enter);  // nothing marked: the TPC under the cursor
    EXPECT_EQ(release.kind, IntentKind::release);
    EXPECT_EQ(release.tpcs.to_list(), "0");
    k.press(KeyCode::f9);
    for (int i = 0; i < 3; ++i) k.press(KeyCode::down);
    EXPECT_EQ(k.press(KeyCode::enter).kind, IntentKind::grow);

    k.ui.dialog = Dialog::confirm;
    k.ui.pending = PendingPlan{gpupart::Plan{}, "Add a TPC to A 4101?"};
    EXPECT_EQ(k.press('y').kind, IntentKind::apply);
    EXPECT_EQ(k.press('n').kind, IntentKind::none);
    EXPECT_EQ(k.ui.dialog, Dialog::none);
    EXPECT_FALSE(k.ui.pending);
    EXPECT_EQ(k.ui.message, "cancelled: nothing changed");

    gpupart::Plan refused;
    refused.findings = {{gpupart::Severity::error, "controller", "no", "x"}};
    k.ui.dialog = Dialog::confirm;
    k.ui.pending = PendingPlan{refused, "?"};
    EXPECT_EQ(k.press('y').kind, IntentKind::none);  // a refused plan is never applied
    EXPECT_EQ(k.press(KeyCode::enter).kind, IntentKind::none);
    EXPECT_EQ(k.ui.dialog, Dialog::none);
}

TEST(TopInput, HelpSetupAndQuit) {
    Keys k;
    k.press('?');
    EXPECT_EQ(k.ui.dialog, Dialog::help);
    k.press('x');
    EXPECT_EQ(k.ui.dialog, Dialog::none);
    k.press(KeyCode::f2);
    k.press(' ');  // colours off
    EXPECT_FALSE(k.ui.settings.colour);
    k.press(KeyCode::down);
    k.press(KeyCode::right);
    EXPECT_EQ(k.ui.settings.delay_tenths, 15);
    k.press(KeyCode::left);
    k.press(KeyCode::left);
    EXPECT_EQ(k.ui.settings.delay_tenths, 9);
    k.press(KeyCode::down);
    k.press(KeyCode::down);
    k.press(KeyCode::down);
    EXPECT_FALSE(k.ui.settings.ascii);
    k.press(KeyCode::enter);  // the fifth item: ASCII only (kept in toprc, as the others)
    EXPECT_TRUE(k.ui.settings.ascii);
    for (char ch : k.last.text()) EXPECT_EQ(static_cast<unsigned char>(ch) & 0x80, 0) << "a UTF-8 glyph in an ASCII frame";
    k.press(KeyCode::escape);
    EXPECT_EQ(k.press('q').kind, IntentKind::quit);
    EXPECT_EQ(k.press(KeyCode::f10).kind, IntentKind::quit);
}
