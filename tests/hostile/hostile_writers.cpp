// Writes through other people's files, inside gpupart's own writers: profiles (`.NAME.json.tmp.<pid>` before), snapshots
// (`X.tmp.<pid>`) and the probe cache (`X.<pid>.tmp`) all used a temporary name another user could
// predict and plant as a symlink, which the writer then followed. Run in this process, so the planted
// names carry exactly the pid the old code would have used.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "controller/profile_store.hpp"
#include "hostile_support.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"
#include "sources/probe_cache.hpp"
#include "sources/probe_report.hpp"

namespace gpupart::hostile {
namespace {

const std::string kVictimText = "the victim's own content\n";

// A victim file and a symlink to it at `planted`: what another user leaves in a shared directory.
std::string plant(const ScratchDir& scratch, const std::string& planted) {
    const std::string victim = scratch / "victim";
    std::ofstream(victim, std::ios::trunc) << kVictimText;
    EXPECT_EQ(::symlink(victim.c_str(), planted.c_str()), 0) << planted;
    return victim;
}

Profile small_profile(const std::string& name) {
    Profile profile;
    profile.name = name;
    ProfileRule rule;
    rule.match.exe = "python3";
    rule.tpcs = "gpc0";
    profile.rules.push_back(rule);
    return profile;
}

TEST(HostileWriters, ProfileSaveNeverFollowsTheOldTemporaryName) {
    ScratchDir scratch;
    ProfileStore store{scratch.path, scratch / "system"};
    const std::string victim = plant(scratch, scratch / fmt::format(".evil.json.tmp.{}", ::getpid()));
    for (const bool overwrite : {false, true}) {
        EXPECT_EQ(store.save(small_profile("evil"), overwrite), scratch / "evil.json");
        EXPECT_EQ(slurp(victim), kVictimText) << "overwrite " << overwrite;
        EXPECT_EQ(store.load("evil").profile, small_profile("evil"));
    }
}

TEST(HostileWriters, ProfileSaveRefusesADeviceNodeOrSymlinkInPlaceOfTheProfile) {
    ScratchDir scratch;
    ProfileStore store{scratch.path, scratch / "system"};
    const std::string victim = plant(scratch, scratch / "linked.json");
    try {
        store.save(small_profile("linked"), true);
        ADD_FAILURE() << "a symlink at the profile's name was replaced";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find(scratch / "linked.json: is a symbolic link"), std::string::npos) << error.what();
    }
    EXPECT_EQ(slurp(victim), kVictimText);
    if (!is_root()) return;
    const std::string full = scratch / "full.json";
    ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)), 0);
    EXPECT_THROW(store.save(small_profile("full"), true), UserError);
    struct stat info {};
    ASSERT_EQ(::lstat(full.c_str(), &info), 0);
    EXPECT_TRUE(S_ISCHR(info.st_mode)) << "the device node was replaced";
}

TEST(HostileWriters, SnapshotSaveNeverFollowsTheOldTemporaryName) {
    ScratchDir scratch;
    const std::string target = scratch / "out.json";
    const std::string victim = plant(scratch, fmt::format("{}.tmp.{}", target, ::getpid()));
    const Snapshot snapshot = load_snapshot("builtin:h200");
    save_snapshot(snapshot, target);
    EXPECT_EQ(slurp(victim), kVictimText);
    EXPECT_EQ(load_snapshot(target), snapshot);
}

TEST(HostileWriters, ProbeCacheNeverFollowsTheOldTemporaryName) {
    ScratchDir scratch;
    ASSERT_EQ(::setenv("XDG_CACHE_HOME", scratch.path.c_str(), 1), 0);
    ProbeReport report;
    report.device.uuid = "GPU-x";
    report.device.driver_version = "1.0";
    const std::string path = probe_cache_path("GPU-x", "1.0");
    ASSERT_EQ(::mkdir((scratch / "gpupart").c_str(), 0755), 0);
    const std::string victim = plant(scratch, fmt::format("{}.{}.tmp", path, ::getpid()));
    EXPECT_EQ(store_probe(report), path);
    EXPECT_EQ(slurp(victim), kVictimText);
    EXPECT_EQ(slurp(path), write_probe_report(report));
    ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace gpupart::hostile
