// capture_profile: what `profile save` and the GUI's "Save current as..." write for the running partitions.
#include <gtest/gtest.h>

#include "controller/profile_capture.hpp"

using namespace gpupart;

namespace {

// `tpcs` as an inclusive range of bits; nullopt = not partitioned.
ProcessState process(int pid, unsigned uid, std::string command, std::optional<std::pair<int, int>> tpcs) {
    ProcessState p;
    p.pid = pid;
    p.uid = uid;
    p.command = std::move(command);
    p.partitioned = tpcs.has_value();
    if (tpcs) p.mask = TpcMask::range(tpcs->first, tpcs->second);
    return p;
}

}  // namespace

TEST(ProfileCapture, OneRulePerPartitionedProcess) {
    SystemState state;
    state.gpu.index = 1;
    state.processes = {process(10, 0, "/usr/bin/python3 train.py", std::pair(0, 7)),
                       process(11, 0, "/opt/bin/server --port 8", std::nullopt),  // unpartitioned: no rule
                       process(12, 0, "./infer -b 4", std::pair(9, 16))};
    const Profile profile = capture_profile(state, "now");
    EXPECT_EQ(profile.name, "now");
    EXPECT_EQ(profile.description, "saved by gpupart from 3 partitioned processes");
    ASSERT_EQ(profile.rules.size(), 2u);
    EXPECT_EQ(profile.rules[0].match.exe, "python3");
    EXPECT_EQ(profile.rules[0].match.user, "root");
    EXPECT_FALSE(profile.rules[0].match.cmdline.has_value());  // the executable alone tells them apart
    EXPECT_EQ(profile.rules[0].gpu, 1);
    EXPECT_EQ(profile.rules[0].tpcs, "0-7");
    EXPECT_EQ(profile.rules[1].match.exe, "infer");
    EXPECT_EQ(profile.rules[1].tpcs, "9-16");
}

TEST(ProfileCapture, SameExecutableAndUserAddsTheEscapedCommandLine) {
    SystemState state;
    state.processes = {process(10, 4000005, "python3 serve.py --model a*", std::pair(0, 3)), process(11, 4000005, "python3 serve.py --model [b]", std::pair(4, 7)),
                       process(12, 4000006, "python3 other.py", std::pair(9, 9))};  // another user's python3 stays matched by exe + user
    const Profile profile = capture_profile(state, "two");
    ASSERT_EQ(profile.rules.size(), 3u);
    EXPECT_EQ(profile.rules[0].match.cmdline, "python3 serve.py --model a\\*");
    EXPECT_EQ(profile.rules[1].match.cmdline, "python3 serve.py --model \\[b]");
    EXPECT_FALSE(profile.rules[2].match.cmdline.has_value());
    // A uid nobody is named for is written as its number, which matches it again.
    EXPECT_EQ(profile.rules[2].match.user, "4000006");
    // Each escaped command line matches its own process only.
    EXPECT_TRUE(rule_matches(profile.rules[0], {10, 4000005, "python3", "python3 serve.py --model a*"}));
    EXPECT_FALSE(rule_matches(profile.rules[0], {11, 4000005, "python3", "python3 serve.py --model ab"}));
    EXPECT_TRUE(rule_matches(profile.rules[2], {12, 4000006, "python3", "python3 other.py"}));
}
