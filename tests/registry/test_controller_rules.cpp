// Profiles through the controller: running processes changed, rules armed for later ones, and undo of both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <unistd.h>

#include "controller/controller.hpp"
#include "controller/profile_apply.hpp"
#include "registry/registry_slot.h"
#include "model/user_error.hpp"
#include "controller_test_fixture.hpp"
#include "registry_test_support.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using gpupart::test::ControllerTest;
using gpupart::test::RegisteredChild;
using gpupart::test::thrown_message;

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
    EXPECT_NE(thrown_message([&] { controller.apply(undo); }).find("nothing changed"), std::string::npos);
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
    EXPECT_NE(thrown_message([&] { controller.apply(plan); }).find("changed since this was planned (now profile meanwhile (1 rule))"),
              std::string::npos);
    EXPECT_EQ(mask_of(running.pid), "0-3");  // the masks were rolled back with it
    EXPECT_EQ(armed_profile(registry_dir.dir), "meanwhile");
    EXPECT_TRUE(Journal(journal_path).read().empty());
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
    const std::string disarm = thrown_message([&] { controller.plan_rules(std::nullopt, "profile disarm"); });
    EXPECT_NE(disarm.find(path + ": cannot read: "), std::string::npos) << disarm;
    EXPECT_NE(disarm.find("nothing changed: remove it (`rm " + path + "`)"), std::string::npos) << disarm;
    EXPECT_EQ(disarm.find('\n'), std::string::npos);
    Profile profile = later_profile("blocked", "python3", "gpc6");
    profile.rules.push_back(ProfileRule{{std::nullopt, std::nullopt, std::nullopt, running.pid}, 0, "gpc1", 3});
    EXPECT_NE(thrown_message([&] { plan_profile(controller, profile, 0); }).find("nothing changed"), std::string::npos);
    EXPECT_EQ(mask_of(running.pid), "0-3");
    std::ifstream in(path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "not a rules table");
    EXPECT_TRUE(Journal(journal_path).read().empty());
}
