// The controller with real registered processes, a real registry and a real journal.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "controller/controller.hpp"
#include "controller/move_plan.hpp"
#include "controller/give_plan.hpp"
#include "model/user_error.hpp"
#include "controller_test_fixture.hpp"
#include "registry_test_support.hpp"
#include "snapshot/snapshot_file.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using gpupart::test::ControllerTest;
using gpupart::test::RegisteredChild;
using gpupart::test::kTestGpu;
using gpupart::test::thrown_message;

namespace {

TpcMask real_tpcs_for_test() { return TpcMask::range(0, 65); }  // TPC numbers of the H200

}  // namespace

TEST_F(ControllerTest, SetIsPlannedAppliedAndJournaled) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    const Plan plan = controller.plan_set({{child.pid, "gpc1"}}, "set gpc1");
    ASSERT_FALSE(plan.refused());
    ASSERT_EQ(plan.changes.size(), 1u);
    // Plans and the history speak TPC numbers; the slot holds the same TPCs as descriptor bits (gpc0: 0-3, gpc1: 9-16).
    EXPECT_EQ(plan.changes[0].before.to_list(), "0,8,16,24");
    EXPECT_EQ(plan.changes[0].after.to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(mask_of(child.pid), "0-3");  // planning changes nothing
    const Applied applied = controller.apply(plan);
    EXPECT_EQ(mask_of(child.pid), "9-16");
    EXPECT_EQ(applied.entry.id, 1);
    const auto entries = Journal(journal_path).read();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].action, "set gpc1");
    ASSERT_EQ(entries[0].changes.size(), 1u);
    EXPECT_EQ(entries[0].changes[0].pid, child.pid);
    EXPECT_EQ(entries[0].changes[0].before.to_list(), "0,8,16,24");
    EXPECT_EQ(entries[0].changes[0].after.to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(entries[0].changes[0].before_bits, TpcMask::range(0, 3));
    EXPECT_EQ(entries[0].changes[0].after_bits, TpcMask::range(9, 16));
    EXPECT_EQ(entries[0].changes[0].generation_after, 2u);
}

// Front ends send the process as the user saw it (pid and start time): a request for a process that has
// exited and whose pid now names another one is refused, never applied to the newcomer.
TEST_F(ControllerTest, ARequestForAReplacedProcessIsRefused) {
    RegisteredChild a(registry_dir.dir, "0xf");
    const Controller controller = make();
    const ProcessState* seen = find_process(controller.state(), a.pid);
    ASSERT_NE(seen, nullptr);
    EXPECT_FALSE(controller.plan_masks({{a.pid, TpcMask::range(9, 16), seen->start_time}}, "set").refused());
    const Plan stale = controller.plan_masks({{a.pid, TpcMask::range(9, 16), seen->start_time + 1}}, "set");
    ASSERT_TRUE(stale.refused());
    EXPECT_EQ(stale.findings.front().id, "process-replaced");
    EXPECT_TRUE(stale.changes.empty());
    EXPECT_TRUE(plan_give(controller, ProcessRef{a.pid, seen->start_time + 1}, TpcMask::range(9, 16)).refused());
    EXPECT_TRUE(plan_grow(controller, {{a.pid, seen->start_time + 1}}).refused());
}

TEST_F(ControllerTest, CountsAreplacedOnTpcsNobodyElseHolds) {
    RegisteredChild a(registry_dir.dir, "0x1fe00");  // gpc1
    RegisteredChild b(registry_dir.dir, "0xf");      // gpc0
    Controller controller = make();
    const Plan plan = controller.plan_set({{b.pid, "8 tpcs"}}, "set 8 tpcs");
    ASSERT_FALSE(plan.refused());
    // gpc1 is taken; gpc0 (b's own 4 and the 4 nobody holds) is the first whole GPC of 8.
    EXPECT_EQ(plan.changes.at(0).after.to_list(), "0,8,16,24,62-65");
    const Plan spread = controller.plan_set({{b.pid, "8 tpcs", Placement::spread}}, "set 8 tpcs --spread");
    EXPECT_EQ(spread.changes.at(0).after.to_list(), "0,2-8");  // one per GPC (TPCs 0-7), gpc1 (TPC 1) skipped, gpc0 twice (0, 8)
    const Plan too_many = controller.plan_set({{b.pid, "60 tpcs"}}, "set 60 tpcs");
    ASSERT_TRUE(too_many.refused());
    EXPECT_NE(too_many.findings.at(0).message.find("only 58 are free"), std::string::npos);
}

TEST_F(ControllerTest, RefusedPlansChangeNothing) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    const Plan holes = controller.plan_set({{child.pid, "bits:0x1f0"}}, "set bits:0x1f0");
    ASSERT_TRUE(holes.refused());
    EXPECT_EQ(holes.findings.at(0).message, "mask 'bits:0x1f0' selects no real TPC on NVIDIA H200: descriptor bits 4-8 are holes");
    EXPECT_NE(thrown_message([&] { controller.apply(holes); }).find("nothing changed"), std::string::npos);
    const Plan missing = controller.plan_set({{child.pid, "66-70"}}, "set 66-70");  // the H200 has TPCs 0-65
    ASSERT_TRUE(missing.refused());
    EXPECT_NE(missing.findings.at(0).message.find("66"), std::string::npos) << missing.findings.at(0).message;
    EXPECT_NE(thrown_message([&] { controller.apply(holes); }).find("nothing changed"), std::string::npos);
    const Plan gone = controller.plan_set({{4194304, "gpc1"}}, "set");  // the largest pid Linux has: not running here
    ASSERT_TRUE(gone.refused());
    EXPECT_EQ(gone.findings.at(0).message, "no process 4194304 is running");
    for (const int impossible : {999999999, 0, -1}) {  // no process can have these: refused before the registry is asked
        const Plan never = controller.plan_set({{impossible, "gpc1"}}, "set");
        ASSERT_TRUE(never.refused());
        EXPECT_EQ(never.findings.at(0).message, fmt::format("{} is not a process id (1 to 4194304)", impossible));
    }
    const Plan unregistered = controller.plan_set({{::getpid(), "gpc1"}}, "set");
    ASSERT_TRUE(unregistered.refused());
    EXPECT_NE(unregistered.findings.at(0).message.find("is not partitioned by gpupart"), std::string::npos);
    EXPECT_EQ(mask_of(child.pid), "0-3");
    EXPECT_TRUE(Journal(journal_path).read().empty());
}

TEST_F(ControllerTest, UndoRevertsTheLastChange) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    controller.apply(controller.plan_set({{child.pid, "gpc1"}}, "set gpc1"));
    controller.apply(controller.plan_set({{child.pid, "gpc6"}}, "set gpc6"));
    EXPECT_EQ(mask_of(child.pid), "54-62");
    const Plan undo = controller.plan_undo();
    ASSERT_FALSE(undo.refused());
    EXPECT_EQ(undo.action, "undo #2 (set gpc6)");
    controller.apply(undo);
    EXPECT_EQ(mask_of(child.pid), "9-16");
    controller.apply(controller.plan_undo());  // then #1
    EXPECT_EQ(mask_of(child.pid), "0-3");
    EXPECT_NE(thrown_message([&] { controller.plan_undo(); }).find("nothing to undo"), std::string::npos);
    const auto entries = Journal(journal_path).read();
    ASSERT_EQ(entries.size(), 4u);
    EXPECT_EQ(entries[2].undoes, 2);
    EXPECT_EQ(entries[3].undoes, 1);
}

TEST_F(ControllerTest, UndoIsRefusedAfterSomeoneElseChangedTheProcess) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    controller.apply(controller.plan_set({{child.pid, "gpc1"}}, "set gpc1"));
    // Another gpupart (not through this journal) moves the process.
    numbered_registry().set_mask(child.pid, kTestGpu, true, gpupart::test::tpcs({6, 14, 22, 30, 37, 44, 51, 58, 60}), real_tpcs_for_test());  // gpc6
    controller.refresh();
    const Plan undo = controller.plan_undo();
    ASSERT_TRUE(undo.refused());
    EXPECT_NE(undo.findings.at(0).message.find("was changed again since #1 (now TPCs 6,14,22,30,37,44,51,58,60)"), std::string::npos);
    EXPECT_EQ(mask_of(child.pid), "54-62");
}

TEST_F(ControllerTest, APlanIsNotAppliedOverAChangeMadeSinceItWasPlanned) {
    RegisteredChild a(registry_dir.dir, "0xf");
    RegisteredChild b(registry_dir.dir, "0xf");
    Controller controller = make();
    const Plan plan = controller.plan_set({{a.pid, "gpc1"}, {b.pid, "gpc2"}}, "set two");
    ASSERT_FALSE(plan.refused());
    numbered_registry().set_mask(b.pid, kTestGpu, true, gpupart::test::tpcs({6, 14, 22, 30, 37, 44, 51, 58, 60}), real_tpcs_for_test());  // concurrent change: gpc6
    EXPECT_NE(thrown_message([&] { controller.apply(plan); }).find("was changed by someone else since"), std::string::npos);
    EXPECT_EQ(mask_of(a.pid), "0-3");    // rolled back: the plan applies whole or not at all
    EXPECT_EQ(mask_of(b.pid), "54-62");  // the other change stands
    EXPECT_TRUE(Journal(journal_path).read().empty());
}

TEST_F(ControllerTest, AnotherUsersProcessIsRefusedBeforeTheKernelRefusesIt) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user (CI runs as root)";
    RegisteredChild child(registry_dir.dir, "0xf");
    const pid_t other = ::fork();
    if (other == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
        Controller controller(Registry(registry_dir.dir), h200(), Journal("/tmp/gpupart-nobody-journal-test"));
        const Plan plan = controller.plan_set({{child.pid, "gpc1"}}, "set");
        ::_exit(plan.refused() && plan.findings.front().message.find("belongs to root") != std::string::npos ? 0 : 11);
    }
    int status = 0;
    ::waitpid(other, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_EQ(mask_of(child.pid), "0-3");
}

TEST_F(ControllerTest, GivingTpcsMovesThemFromTheirHoldersAndNeverStarvesOne) {
    RegisteredChild a(registry_dir.dir, "0x1fe0f");  // gpc0 (0-3) and gpc1 (9-16)
    RegisteredChild b(registry_dir.dir, "0x3fc0000");  // gpc2 (18-25)
    Controller controller = make();
    const TpcMask gpc1 = gpupart::test::tpcs({1, 9, 17, 25, 32, 39, 46, 53});
    const Plan give = plan_give(controller, ProcessRef{b.pid}, gpc1);
    ASSERT_FALSE(give.refused()) << finding_line(give.findings.at(0));
    EXPECT_EQ(give.action, "give 1,9,17,25,32,39,46,53 to " + std::to_string(b.pid));
    controller.apply(give);
    EXPECT_EQ(mask_of(a.pid), "0-3");
    EXPECT_EQ(mask_of(b.pid), "9-16,18-25");

    controller.refresh();
    const Plan starve = plan_give(controller, ProcessRef{b.pid}, gpupart::test::tpcs({0, 8, 16, 24}));  // a's last TPCs
    ASSERT_TRUE(starve.refused());
    EXPECT_TRUE(std::any_of(starve.findings.begin(), starve.findings.end(),
                            [](const Finding& f) { return f.id == "last-tpcs"; }));
    EXPECT_THROW(controller.apply(starve), UserError);
    EXPECT_EQ(mask_of(a.pid), "0-3");

    const TpcMask gpc2 = gpupart::test::tpcs({2, 10, 18, 26, 33, 40, 47, 54});
    const Plan release = plan_give(controller, std::nullopt, gpc2);
    ASSERT_FALSE(release.refused());
    EXPECT_EQ(release.action, "release 2,10,18,26,33,40,47,54");
    controller.apply(release);
    EXPECT_EQ(mask_of(b.pid), "9-16");
    controller.refresh();
    const Plan already_free = plan_give(controller, std::nullopt, gpc2);
    EXPECT_TRUE(already_free.changes.empty());
    EXPECT_TRUE(already_free.refused());  // never journaled: the next undo would undo nothing
    EXPECT_TRUE(std::any_of(already_free.findings.begin(), already_free.findings.end(),
                            [](const Finding& f) { return f.id == "no-change"; }));
}

// A history entry written before gpupart used TPC numbers holds launch-descriptor bits and no "numbering":
// read through the GPU's map it names the same TPCs, and undo puts back those; a view that does not know
// the map refuses to undo it rather than guess.
TEST_F(ControllerTest, AnEntryFromBeforeTpcNumbersIsReadThroughTheMapOrNotUndone) {
    RegisteredChild child(registry_dir.dir, "0xf");  // descriptor bits 0-3: gpc0
    // An older gpupart moved it to gpc1 (bits 9-16) and journaled that in bits.
    const SlotRecord moved = numbered_registry().set_mask(child.pid, kTestGpu, true, gpupart::test::tpcs({1, 9, 17, 25, 32, 39, 46, 53}),
                                                          real_tpcs_for_test());
    ASSERT_TRUE(moved.control.has_value());
    std::ofstream(journal_path) << fmt::format(
        R"({{"id":1,"time":"2026-11-01T00:00:00Z","uid":{},"user":"old","action":"set {} gpc1","undoes":null,)"
        R"("changes":[{{"pid":{},"gpu":"{}","start_time":{},"command":"worker","before":"0xf","after":"0x1fe00",)"
        R"("before_tpcs":"0-3","after_tpcs":"9-16","generation_after":{}}}]}})"
        "\n",
        ::getuid(), child.pid, child.pid, kTestGpu, moved.start_time, moved.control->generation);

    const JournalChange unmapped = Journal(journal_path).read().at(0).changes.at(0);
    EXPECT_FALSE(unmapped.numbered);
    EXPECT_EQ(unmapped.before.to_list(), "0-3");
    EXPECT_EQ(unmapped.after.to_list(), "9-16");
    Journal learnt(journal_path);
    learnt.learn_numbering(h200());
    const JournalChange mapped = learnt.read().at(0).changes.at(0);
    EXPECT_TRUE(mapped.numbered);
    EXPECT_EQ(mapped.before.to_list(), "0,8,16,24");
    EXPECT_EQ(mapped.after.to_list(), "1,9,17,25,32,39,46,53");

    // The same GPU with its mask bits not known (never probed): undo is refused and nothing changes.
    Gpu unprobed = h200();
    for (Tpc& tpc : unprobed.tpcs) tpc.mask_bit.reset();
    const Controller blind(Registry(registry_dir.dir), unprobed, Journal(journal_path));
    const Plan refused = blind.plan_undo();
    ASSERT_TRUE(refused.refused());
    EXPECT_TRUE(std::any_of(refused.findings.begin(), refused.findings.end(),
                            [](const Finding& f) { return f.id == "undo-unnumbered"; }));
    EXPECT_EQ(mask_of(child.pid), "9-16");

    Controller controller = make();
    const Plan undo = controller.plan_undo();
    ASSERT_FALSE(undo.refused()) << finding_line(undo.findings.at(0));
    ASSERT_EQ(undo.changes.size(), 1u);
    EXPECT_EQ(undo.changes[0].after.to_list(), "0,8,16,24");
    controller.apply(undo);
    EXPECT_EQ(mask_of(child.pid), "0-3");  // gpc0's descriptor bits, as before the old change
}

// A controller on a GPU whose map is not known reads a confined process's descriptor bits without naming them
// as TPC numbers: the process is confined, to TPCs it cannot name, and says so.
TEST_F(ControllerTest, BitsOfAGpuWhoseMapIsNotKnownAreNeverTakenForTpcNumbers) {
    RegisteredChild child(registry_dir.dir, "0xf");  // descriptor bits 0-3: gpc0, TPCs 0,8,16,24
    Gpu unprobed = h200();
    for (Tpc& tpc : unprobed.tpcs) tpc.mask_bit.reset();
    const Controller blind(Registry(registry_dir.dir), unprobed, Journal(journal_path));
    const ProcessState* process = find_process(blind.state(), child.pid);
    ASSERT_NE(process, nullptr);
    EXPECT_TRUE(process->partitioned);
    EXPECT_TRUE(process->mask.empty()) << process->mask.to_list();  // never "0-3" read as TPC numbers
    EXPECT_EQ(process->shim_word, "bits");
    EXPECT_NE(process->shim_sentence.find("bits:0xf"), std::string::npos) << process->shim_sentence;
    const Controller controller = make();
    const ProcessState* known = find_process(controller.state(), child.pid);
    ASSERT_NE(known, nullptr);
    EXPECT_EQ(known->mask.to_list(), "0,8,16,24");
}
