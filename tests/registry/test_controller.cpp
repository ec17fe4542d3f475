// The controller with real registered processes, a real registry and a real journal.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "controller/controller.hpp"
#include "controller/move_plan.hpp"
#include "controller/give_plan.hpp"
#include "controller/profile_apply.hpp"
#include "registry/registry_slot.h"
#include "model/user_error.hpp"
#include "controller_test_fixture.hpp"
#include "registry_test_support.hpp"
#include "snapshot/snapshot_file.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;
using gpupart::test::kTestGpu;

namespace {

const Gpu& h200() { return gpupart::test::builtin_h200(); }

struct ControllerTest : gpupart::test::ControllerFixture {};

TpcMask real_tpcs_for_test() { return TpcMask::range(0, 65); }  // TPC numbers of the H200

std::string error_of(const std::function<void()>& action) {
    return gpupart::test::thrown_message([&] { action(); });
}

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
    EXPECT_NE(error_of([&] { controller.apply(holes); }).find("nothing changed"), std::string::npos);
    const Plan missing = controller.plan_set({{child.pid, "66-70"}}, "set 66-70");  // the H200 has TPCs 0-65
    ASSERT_TRUE(missing.refused());
    EXPECT_NE(missing.findings.at(0).message.find("66"), std::string::npos) << missing.findings.at(0).message;
    EXPECT_NE(error_of([&] { controller.apply(holes); }).find("nothing changed"), std::string::npos);
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
    EXPECT_NE(error_of([&] { controller.plan_undo(); }).find("nothing to undo"), std::string::npos);
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
    EXPECT_NE(error_of([&] { controller.apply(plan); }).find("was changed by someone else since"), std::string::npos);
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

TEST_F(ControllerTest, ProfilesChangeRunningProcessesAndArmRulesForLaterOnes) {
    RegisteredChild running(registry_dir.dir, nullptr);
    Controller controller = make();
    Profile profile;
    profile.name = "mix";
    profile.rules = {ProfileRule{{std::nullopt, std::nullopt, std::nullopt, running.pid}, 0, "gpc1", 3},
                     ProfileRule{{"python3", std::nullopt, std::nullopt, std::nullopt}, 0, "8 tpcs", 4},
                     ProfileRule{{"trainer", std::nullopt, std::nullopt, std::nullopt}, 0, "8 tpcs", 5},
                     ProfileRule{{std::string(80, 'x'), std::nullopt, std::nullopt, std::nullopt}, 0, "gpc0", 6},
                     ProfileRule{{std::nullopt, "*serve*", std::nullopt, std::nullopt}, 0, "gpc7", 7}};
    const ProfileApplication application = plan_profile(controller, profile, 0);
    ASSERT_EQ(application.plan.changes.size(), 1u);
    EXPECT_EQ(application.plan.changes[0].pid, running.pid);
    EXPECT_EQ(application.plan.changes[0].after.to_list(), "1,9,17,25,32,39,46,53");
    ASSERT_EQ(application.not_armed.size(), 1u);
    EXPECT_NE(application.not_armed[0].find("matches pid"), std::string::npos);
    // The too-long exe is refused, not cut short; the rules after it are armed cleanly.
    ASSERT_TRUE(application.plan.refused());
    EXPECT_NE(application.plan.findings.back().message.find("exe name longer than 63 bytes"), std::string::npos);
    ASSERT_EQ(application.rules.count, 3u);
    const auto& rules = application.rules.rules;
    // gpc1 goes to the running process; two "8 tpcs" rules get different whole GPCs. The shim copies a rule's
    // masks into a new process's slot as they are: the table holds descriptor bits (gpc0, gpc2, gpc7).
    EXPECT_EQ(mask_from_words(rules[0].allowed).to_list(), "0-3,75,78,81,83");
    EXPECT_EQ(mask_from_words(rules[1].allowed).to_list(), "18-25");
    EXPECT_EQ(rules[2].match, GPUPART_RULE_MATCH_CMDLINE);            // nothing left over from the refused rule
    EXPECT_EQ(mask_from_words(rules[2].allowed).to_list(), "63-71");
    // The shim's matcher agrees with the table.
    EXPECT_EQ(gpupart_rules_match(&application.rules, "python3", "python3 serve.py", 1000), 0);
    EXPECT_EQ(gpupart_rules_match(&application.rules, "node", "node serve.js", 1000), 2);
    EXPECT_EQ(gpupart_rules_match(&application.rules, "node", "node app.js", 1000), -1);
}

TEST_F(ControllerTest, ArmedRulesRoundTripThroughTheRegistry) {
    Controller controller = make();
    Profile profile;
    profile.name = "later";
    profile.rules = {ProfileRule{{"python3", std::nullopt, "root", std::nullopt}, 0, "gpc6", 2}};
    const ProfileApplication application = plan_profile(controller, profile, 0);
    ASSERT_FALSE(application.plan.refused());
    ASSERT_TRUE(application.plan.changes.empty());  // no process runs: only the rules change
    ASSERT_FALSE(application.plan.changes_nothing());
    controller.apply(application.plan);
    gpupart_rules_file read{};
    ASSERT_EQ(gpupart_rules_read(gpupart::test::user_dir_in(registry_dir.dir).c_str(), ::getuid(), &read), 0);
    EXPECT_EQ(read.count, 1u);
    EXPECT_STREQ(read.profile, "later");
    EXPECT_EQ(read.rules[0].match, GPUPART_RULE_MATCH_EXE | GPUPART_RULE_MATCH_UID);
    EXPECT_EQ(gpupart_rules_match(&read, "python3", "python3 x.py", 0), 0);
    EXPECT_EQ(gpupart_rules_match(&read, "python3", "python3 x.py", 1000), -1);  // another user
    controller.apply(controller.plan_rules(std::nullopt, "profile disarm"));
    EXPECT_EQ(gpupart_rules_read(registry_dir.dir.c_str(), ::getuid(), &read), -ENOENT);
    EXPECT_TRUE(controller.plan_rules(std::nullopt, "profile disarm").changes_nothing());  // nothing armed
}

namespace {

Profile later_profile(const std::string& name, const std::string& exe, const std::string& tpcs) {
    Profile profile;
    profile.name = name;
    profile.rules = {ProfileRule{{exe, std::nullopt, std::nullopt, std::nullopt}, 0, tpcs, 2}};
    return profile;
}

std::string armed_profile(const std::string& registry_dir) {
    const ArmedRules armed = read_armed_rules(registry_dir);
    return armed ? std::string(armed->profile) : "none";
}

}  // namespace

TEST_F(ControllerTest, UndoingAProfilePutsBackTheRulesItReplacedAndTheJournalKeepsThem) {
    RegisteredChild running(registry_dir.dir, "0xf");
    Controller controller = make();
    controller.apply(plan_profile(controller, later_profile("first", "python3", "gpc6"), 0).plan);
    Profile second = later_profile("second", "trainer", "gpc5");
    second.rules.push_back(ProfileRule{{std::nullopt, std::nullopt, std::nullopt, running.pid}, 0, "gpc1", 3});
    controller.apply(plan_profile(controller, second, 0).plan);
    EXPECT_EQ(armed_profile(registry_dir.dir), "second");
    EXPECT_EQ(mask_of(running.pid), "9-16");

    // The journal holds both tables, read back exactly (a fresh Journal reads the file).
    const auto entries = Journal(journal_path).read();
    ASSERT_EQ(entries.size(), 2u);
    ASSERT_TRUE(entries[1].rules.has_value());
    EXPECT_EQ(rules_summary(entries[1].rules->before), "profile first (1 rule)");
    EXPECT_EQ(rules_summary(entries[1].rules->after), "profile second (1 rule)");
    EXPECT_TRUE(same_rules(entries[1].rules->after, read_armed_rules(registry_dir.dir)));

    const Plan undo = controller.plan_undo();
    ASSERT_FALSE(undo.refused());
    ASSERT_TRUE(undo.rules.has_value());
    controller.apply(undo);
    EXPECT_EQ(armed_profile(registry_dir.dir), "first");  // the table the second apply replaced
    EXPECT_EQ(mask_of(running.pid), "0-3");
    controller.apply(controller.plan_undo());
    EXPECT_EQ(armed_profile(registry_dir.dir), "none");  // the first apply armed onto nothing
}

TEST_F(ControllerTest, DisarmingIsUndoneLikeAnyChange) {
    Controller controller = make();
    controller.apply(plan_profile(controller, later_profile("kept", "python3", "gpc6"), 0).plan);
    const Applied disarmed = controller.apply(controller.plan_rules(std::nullopt, "profile disarm"));
    EXPECT_EQ(disarmed.entry.action, "profile disarm");
    EXPECT_EQ(armed_profile(registry_dir.dir), "none");
    controller.apply(controller.plan_undo());
    EXPECT_EQ(armed_profile(registry_dir.dir), "kept");
}

TEST_F(ControllerTest, UndoLeavesRulesArmedSinceAndSaysSo) {
    Controller controller = make();
    controller.apply(plan_profile(controller, later_profile("mine", "python3", "gpc6"), 0).plan);
    // Armed outside this journal since (another front end with another history, or a hand-made table).
    Controller other(Registry(registry_dir.dir), gpupart::test::builtin_h200(), Journal(registry_dir.dir + "/other.jsonl"));
    other.apply(plan_profile(other, later_profile("theirs", "trainer", "gpc5"), 0).plan);
    const Plan undo = controller.plan_undo();
    ASSERT_TRUE(undo.refused());
    EXPECT_EQ(undo.findings.back().id, "undo-rules-changed-since");
    EXPECT_NE(undo.findings.back().message.find("changed since #1 (now profile theirs (1 rule))"), std::string::npos);
    EXPECT_NE(error_of([&] { controller.apply(undo); }).find("nothing changed"), std::string::npos);
    EXPECT_EQ(armed_profile(registry_dir.dir), "theirs");
}

TEST_F(ControllerTest, AProfileIsNotAppliedOverRulesArmedSinceItWasPlanned) {
    RegisteredChild running(registry_dir.dir, "0xf");
    Controller controller = make();
    Profile profile = later_profile("planned", "python3", "gpc6");
    profile.rules.push_back(ProfileRule{{std::nullopt, std::nullopt, std::nullopt, running.pid}, 0, "gpc1", 3});
    const Plan plan = plan_profile(controller, profile, 0).plan;
    Controller other(Registry(registry_dir.dir), gpupart::test::builtin_h200(), Journal(registry_dir.dir + "/other.jsonl"));
    other.apply(plan_profile(other, later_profile("meanwhile", "trainer", "gpc5"), 0).plan);
    EXPECT_NE(error_of([&] { controller.apply(plan); }).find("changed since this was planned (now profile meanwhile (1 rule))"),
              std::string::npos);
    EXPECT_EQ(mask_of(running.pid), "0-3");  // the masks were rolled back with it
    EXPECT_EQ(armed_profile(registry_dir.dir), "meanwhile");
    EXPECT_TRUE(Journal(journal_path).read().empty());
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

// The shim copies an armed rule's mask into a new process's slot as descriptor bits: on a GPU whose map is not
// known, a rule for later processes cannot be written and is refused, never armed in TPC numbers.
TEST_F(ControllerTest, RulesAreNotArmedOnAGpuWhoseMapIsNotKnown) {
    Gpu unprobed = h200();
    for (Tpc& tpc : unprobed.tpcs) tpc.mask_bit.reset();
    Controller controller(Registry(registry_dir.dir), unprobed, Journal(journal_path));
    const ProfileApplication application = plan_profile(controller, later_profile("blind", "python3", "gpc6"), 0);
    ASSERT_TRUE(application.plan.refused());
    EXPECT_TRUE(std::any_of(application.plan.findings.begin(), application.plan.findings.end(),
                            [](const Finding& f) { return f.id == "mask-bits-unknown"; }));
    EXPECT_EQ(application.rules.count, 0u);
    EXPECT_THROW(controller.apply(application.plan), UserError);
    EXPECT_EQ(armed_profile(registry_dir.dir), "none");
}

TEST_F(ControllerTest, AMalformedRulesTableInTheHistoryIsSkippedWithOneLineNamingTheField) {
    const auto write_line = [&](const std::string& rules) {
        std::ofstream(journal_path) << R"({"id":1,"time":"2026-11-23T00:00:00Z","uid":0,"user":"root","action":"profile apply x",)"
                                    << R"("undoes":null,"changes":[],"rules":)" << rules << "}\n";
    };
    const std::string rule = R"({"match":MATCH,"uid":0,"gpu":"GPU-00000000-0000-0000-0000-000000000001","line":2,"allowed":"0x3","real_tpcs":"0xff","exe":"python3","cmdline":""})";
    const auto table = [&](const std::string& match) {
        std::string r = rule;
        r.replace(r.find("MATCH"), 5, match);
        return R"({"before":null,"after":{"profile":"x","owner_uid":0,"written_realtime_ns":1,"rules":[)" + r + "]}}";
    };
    write_line(table("1"));
    const auto entries = Journal(journal_path).read();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(rules_summary(entries[0].rules->after), "profile x (1 rule)");
    // A malformed entry is skipped, and said once in one line naming the line and the field (journal.hpp).
    write_line(table("0"));
    JournalContents contents = Journal(journal_path).load();
    EXPECT_TRUE(contents.entries.empty());
    ASSERT_EQ(contents.notes.size(), 1u);
    const std::string& note = contents.notes[0];
    EXPECT_NE(note.find(":1: field rules.after.rules[0].match: 0 is not a set of EXE (1), CMDLINE (2) and UID (4)"), std::string::npos)
        << note;
    EXPECT_EQ(note.find('\n'), std::string::npos);
    write_line(R"({"before":null})");
    contents = Journal(journal_path).load();
    ASSERT_EQ(contents.notes.size(), 1u);
    EXPECT_NE(contents.notes[0].find("rules.after: missing"), std::string::npos);
}

TEST_F(ControllerTest, AnUnreadableRulesTableIsAOneLineErrorAndIsLeftAsItIs) {
    RegisteredChild running(registry_dir.dir, "0xf");
    const std::string path = gpupart::test::user_dir_in(registry_dir.dir) + "/rules";
    std::ofstream(path) << "not a rules table";  // the wrong size: another layout, or not gpupart's
    Controller controller = make();
    const std::string disarm = error_of([&] { controller.plan_rules(std::nullopt, "profile disarm"); });
    EXPECT_NE(disarm.find(path + ": cannot read: "), std::string::npos) << disarm;
    EXPECT_NE(disarm.find("nothing changed: remove it (`rm " + path + "`)"), std::string::npos) << disarm;
    EXPECT_EQ(disarm.find('\n'), std::string::npos);
    Profile profile = later_profile("blocked", "python3", "gpc6");
    profile.rules.push_back(ProfileRule{{std::nullopt, std::nullopt, std::nullopt, running.pid}, 0, "gpc1", 3});
    EXPECT_NE(error_of([&] { plan_profile(controller, profile, 0); }).find("nothing changed"), std::string::npos);
    EXPECT_EQ(mask_of(running.pid), "0-3");
    std::ifstream in(path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "not a rules table");
    EXPECT_TRUE(Journal(journal_path).read().empty());
}
