// give / grow / shrink planned by the controller over real registered processes, and a `gpupart top`
// session driven by keys: the registry changes only after the confirmation, and `u` undoes it.
#include <algorithm>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "controller/move_plan.hpp"
#include "controller_test_fixture.hpp"
#include "model/user_error.hpp"
#include "registry_test_support.hpp"
#include "snapshot/snapshot_file.hpp"
#include "top/top_session.hpp"
#include "top/top_view.hpp"

using namespace gpupart;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;
using gpupart::test::tpcs;

namespace {

struct MovePlanTest : gpupart::test::ControllerFixture {};

bool has_finding(const Plan& plan, const std::string& id) {
    for (const Finding& f : plan.findings)
        if (f.id == id) return true;
    return false;
}

}  // namespace

TEST_F(MovePlanTest, GivingTakesTheTpcsFromTheirHolder) {
    // Slots hold descriptor bits; plans speak TPC numbers. Bits 9-12 are TPCs 1,9,17,25, bits 36-39 TPCs 4,12,20,28.
    RegisteredChild a(registry_dir.dir, "0x1fe0f");  // gpc0-1: bits 0-3,9-16
    RegisteredChild b(registry_dir.dir, "0xf000000000");  // bits 36-39 (gpc4)
    Controller controller = make();
    const Plan plan = plan_give(controller, ProcessRef{b.pid}, tpcs({1, 9, 17, 25}));
    ASSERT_FALSE(plan.refused());
    EXPECT_EQ(plan.action, fmt::format("give 1,9,17,25 to {}", b.pid));
    ASSERT_EQ(plan.changes.size(), 2u);
    EXPECT_EQ(plan.changes[0].pid, b.pid);
    EXPECT_EQ(plan.changes[0].after.to_list(), "1,4,9,12,17,20,25,28");
    EXPECT_EQ(plan.changes[1].pid, a.pid);
    EXPECT_EQ(plan.changes[1].after.to_list(), "0,8,16,24,32,39,46,53");
    controller.apply(plan);
    EXPECT_EQ(mask_of(a.pid), "0-3,13-16");
    EXPECT_EQ(mask_of(b.pid), "9-12,36-39");
    // Undo puts both back in one step.
    controller.apply(controller.plan_undo());
    EXPECT_EQ(mask_of(a.pid), "0-3,9-16");
    EXPECT_EQ(mask_of(b.pid), "36-39");
}

TEST_F(MovePlanTest, GivingAProcessItsLastTpcsAwayIsRefused) {
    RegisteredChild a(registry_dir.dir, "0xf");
    RegisteredChild b(registry_dir.dir, "0x1fe00");
    Controller controller = make();
    const Plan plan = plan_give(controller, ProcessRef{b.pid}, tpcs({0, 8, 16, 24}));  // a's bits 0-3
    EXPECT_TRUE(plan.refused());
    EXPECT_TRUE(has_finding(plan, "last-tpcs"));
    EXPECT_TRUE(plan_give(controller, ProcessRef{b.pid}, tpcs({66, 70})).refused());  // numbers the H200 lacks
    EXPECT_EQ(mask_of(a.pid), "0-3");
}

TEST_F(MovePlanTest, GrowAndShrinkByOneTpc) {
    RegisteredChild a(registry_dir.dir, "0x1e00");  // bits 9-12
    RegisteredChild b(registry_dir.dir, "0x1e000");  // bits 13-16
    Controller controller = make();
    const TpcMask gpc1 = tpcs({1, 9, 17, 25, 32, 39, 46, 53});  // bits 9-16
    const Plan grow = plan_grow(controller, {{a.pid}, {b.pid}});
    ASSERT_FALSE(grow.refused());
    EXPECT_TRUE(has_finding(grow, "grow-choice"));  // it says why each TPC was chosen
    ASSERT_EQ(grow.changes.size(), 2u);
    // gpc1 is full: each gets one free TPC elsewhere, not the same one.
    const TpcMask extra_a = grow.changes[0].after & ~gpc1;
    const TpcMask extra_b = grow.changes[1].after & ~gpc1;
    EXPECT_EQ(extra_a.count(), 1);
    EXPECT_EQ(extra_b.count(), 1);
    EXPECT_NE(extra_a, extra_b);
    controller.apply(grow);
    const Plan shrink = plan_shrink(controller, {{a.pid}});
    ASSERT_FALSE(shrink.refused());
    controller.apply(shrink);
    EXPECT_EQ(mask_of(a.pid), "9-12");  // the TPC outside gpc1 goes first
    RegisteredChild c(registry_dir.dir, "0x200");  // 9 only
    controller.refresh();
    EXPECT_TRUE(has_finding(plan_shrink(controller, {{c.pid}}), "last-tpc"));
}

TEST_F(MovePlanTest, GrowingPrefersAWhollyFreeGpcOverOneAnotherProcessUses) {
    RegisteredChild a(registry_dir.dir, "0x1e00");   // 9-12: half of gpc1
    RegisteredChild b(registry_dir.dir, "0x1e000");  // 13-16: the rest of gpc1
    RegisteredChild c(registry_dir.dir, "0x3");      // 0-1: half of gpc0 (2-3 free)
    Controller controller = make();
    const Plan grow = plan_grow(controller, {{a.pid}});
    ASSERT_FALSE(grow.refused());
    ASSERT_EQ(grow.changes.size(), 1u);
    // gpc1 is full; gpc0's free bits 2-3 would make a share gpc0 with c: gpc2 (bits 18-25) is wholly free.
    EXPECT_EQ(grow.changes[0].after.to_list(), "1-2,9,17,25");  // bits 9-12 and 18
    const auto why = std::find_if(grow.findings.begin(), grow.findings.end(), [](const Finding& f) { return f.id == "grow-choice"; });
    ASSERT_NE(why, grow.findings.end());
    EXPECT_NE(why->message.find("gpc2, which is wholly free"), std::string::npos) << why->message;
    // c still has free TPCs in its own gpc0: it gets one of those, and the note says so.
    const Plan grow_c = plan_grow(controller, {{c.pid}});
    EXPECT_EQ(grow_c.changes.at(0).after.to_list(), "0,8,16");  // bits 0-2
    EXPECT_NE(grow_c.findings.at(0).message.find("gpc0, a GPC it already uses"), std::string::npos) << grow_c.findings.at(0).message;
}

TEST_F(MovePlanTest, ChangesThatChangeNothingAreRefusedAndNeverJournaled) {
    RegisteredChild a(registry_dir.dir, "0x1fe00");  // gpc1: 9-16
    Controller controller = make();
    // Giving a process TPCs it holds, releasing free TPCs, setting the mask it has: each refused.
    const TpcMask gpc1 = tpcs({1, 9, 17, 25, 32, 39, 46, 53});  // bits 9-16
    const Plan give = plan_give(controller, ProcessRef{a.pid}, tpcs({1, 9, 17, 25}));  // bits 9-12
    EXPECT_TRUE(give.refused());
    EXPECT_TRUE(has_finding(give, "no-change"));
    const Plan release = plan_give(controller, std::nullopt, tpcs({2, 10, 18, 26, 33, 40, 47, 54}));  // gpc2, free
    EXPECT_TRUE(release.refused());
    EXPECT_TRUE(has_finding(release, "no-change"));
    const Plan set = controller.plan_set({{a.pid, "gpc1"}}, "set gpc1");
    EXPECT_TRUE(set.refused());
    EXPECT_TRUE(has_finding(set, "no-change"));
    const Plan same = controller.plan_masks({{a.pid, gpc1}}, "same");
    EXPECT_TRUE(same.refused());
    for (const Plan* plan : {&give, &release, &set, &same}) EXPECT_THROW(controller.apply(*plan), UserError);
    // Even a plan built by hand with nothing in it never reaches the journal.
    Plan empty;
    empty.action = "nothing";
    EXPECT_THROW(controller.apply(empty), UserError);
    EXPECT_TRUE(Journal(journal_path).read().empty());
    EXPECT_THROW(controller.plan_undo(), UserError);  // nothing to undo
    // A plan that changes one process and leaves another as it is applies the one change only.
    RegisteredChild b(registry_dir.dir, "0x3fc0000");  // gpc2: 18-25
    controller.refresh();
    const Plan mixed = controller.plan_masks({{a.pid, gpc1}, {b.pid, tpcs({2, 10, 18, 26})}}, "mixed");  // b: bits 18-21
    ASSERT_FALSE(mixed.refused());
    ASSERT_EQ(mixed.changes.size(), 1u);
    EXPECT_EQ(mixed.changes[0].pid, b.pid);
    controller.apply(mixed);
    EXPECT_EQ(Journal(journal_path).read().at(0).changes.size(), 1u);
}

TEST_F(MovePlanTest, ATopSessionMovesTpcsWithKeysAndUndoesThem) {
    RegisteredChild a(registry_dir.dir, "0x1fe0f");  // 0-3,9-16
    RegisteredChild b(registry_dir.dir, "0xf000000000");  // 36-39
    top::TopSource source{"builtin:h200", true, "test", "", 1};
    top::TopSession session(make(), Registry(registry_dir.dir), source, top::Settings{});
    session.frame(80, 24);
    const auto press = [&](top::Key key) {
        const bool going = session.handle(key);
        session.frame(80, 24);
        return going;
    };
    if (b.pid > a.pid) press(top::code_key(top::KeyCode::down));  // the table is in pid order: select b
    ASSERT_EQ(top::selected_process(session.data(), session.ui())->pid, b.pid);
    press(top::code_key(top::KeyCode::tab));
    press(top::code_key(top::KeyCode::down));  // gpc1
    press(top::char_key('g'));
    press(top::code_key(top::KeyCode::enter));
    ASSERT_EQ(session.ui().dialog, top::Dialog::confirm);
    EXPECT_EQ(mask_of(a.pid), "0-3,9-16");  // nothing changes before the confirmation
    press(top::char_key('y'));
    EXPECT_EQ(session.ui().message.substr(0, 10), "applied #1");
    EXPECT_EQ(mask_of(b.pid), "9-16,36-39");
    EXPECT_EQ(mask_of(a.pid), "0-3");
    press(top::char_key('u'));
    ASSERT_EQ(session.ui().dialog, top::Dialog::confirm);
    press(top::code_key(top::KeyCode::enter));
    EXPECT_EQ(mask_of(a.pid), "0-3,9-16");
    EXPECT_EQ(mask_of(b.pid), "36-39");
    EXPECT_FALSE(press(top::char_key('q')));
}

// In a larger change: the process left as it is drops out, the rest goes ahead.
TEST_F(MovePlanTest, AnUnchangedProcessDropsOutOfALargerChange) {
    RegisteredChild a(registry_dir.dir, "0x1fe0f");  // 0-3,9-16
    RegisteredChild b(registry_dir.dir, "0xf000000000");  // 36-39
    Controller controller = make();
    // a as it is (bits 0-3,9-16); b grows from bits 36-39 to 36-40.
    const Plan mixed = controller.plan_masks({{a.pid, tpcs({0, 1, 8, 9, 16, 17, 24, 25, 32, 39, 46, 53}), 0},
                                              {b.pid, tpcs({4, 12, 20, 28, 35}), 0}}, "set");
    ASSERT_FALSE(mixed.refused());
    ASSERT_EQ(mixed.changes.size(), 1u);
    EXPECT_EQ(mixed.changes[0].pid, b.pid);
    EXPECT_TRUE(has_finding(mixed, "no-change"));
    EXPECT_EQ(mask_of(a.pid), "0-3,9-16");
}
