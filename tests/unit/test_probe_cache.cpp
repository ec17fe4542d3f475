// Probe results cached per GPU UUID and driver version, in $XDG_CACHE_HOME/gpupart or ~/.cache/gpupart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/user_error.hpp"
#include "probe_fixtures.hpp"
#include "sources/probe_cache.hpp"

namespace fs = std::filesystem;
using gpupart::SourceState;

namespace {

class ProbeCache : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("gpupart-cache-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        ::setenv("XDG_CACHE_HOME", root_.c_str(), 1);
    }
    void TearDown() override {
        ::unsetenv("XDG_CACHE_HOME");
        fs::remove_all(root_);
    }
    fs::path root_;
};

}  // namespace

TEST_F(ProbeCache, StoresAndFindsAProbeByUuidAndDriver) {
    gpupart::ProbeReport report = gpupart::test::h200_recorded_report();
    report.device.uuid = "GPU-0a1b2c3d-0000-1111-2222-333344445555";
    const std::string path = gpupart::store_probe(report);
    EXPECT_EQ(path, root_.string() + "/gpupart/probe-GPU-0a1b2c3d-0000-1111-2222-333344445555-580.159.04.txt");
    const gpupart::CachedProbe cached = gpupart::load_cached_probe(report.device.uuid, "580.159.04");
    ASSERT_EQ(cached.status.state, SourceState::ok) << cached.status.detail;
    EXPECT_EQ(cached.status.detail, "cached probe " + path);
    EXPECT_EQ(cached.report->bit_sms, report.bit_sms);
    EXPECT_EQ(fs::directory_iterator(root_ / "gpupart")->path(), path) << "no temporary file is left";
}

TEST_F(ProbeCache, AnotherDriverOrGpuHasNoProbeYet) {
    gpupart::ProbeReport report = gpupart::test::h200_recorded_report();
    gpupart::store_probe(report);
    const gpupart::CachedProbe other_driver = gpupart::load_cached_probe(report.device.uuid, "590.10");
    EXPECT_EQ(other_driver.status.state, SourceState::absent);
    EXPECT_EQ(other_driver.status.detail, "no probe of GPU-not-recorded with driver 590.10 yet: run `gpupart probe`");
    EXPECT_FALSE(other_driver.report.has_value());
}

TEST_F(ProbeCache, AnUnreadableOrMisplacedFileIsAFailureNotAProbe) {
    const std::string path = gpupart::probe_cache_path("GPU-x", "1.0");
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "gpupart-probe 1\nindex 0\n";
    gpupart::CachedProbe cached = gpupart::load_cached_probe("GPU-x", "1.0");
    EXPECT_EQ(cached.status.state, SourceState::failed);
    EXPECT_EQ(cached.status.detail,
              path + ": probe output ends before its 'end' line: the probe was cut off (run `gpupart probe` to measure again)");
    std::ofstream(path) << gpupart::write_probe_report(gpupart::test::h200_recorded_report());
    cached = gpupart::load_cached_probe("GPU-x", "1.0");
    EXPECT_EQ(cached.status.state, SourceState::failed);
    EXPECT_EQ(cached.status.detail, path + " holds a probe of GPU-not-recorded with driver 580.159.04, not this GPU");
    EXPECT_FALSE(cached.report.has_value());
}

TEST_F(ProbeCache, NamesAreSafeAndHomeIsTheFallback) {
    EXPECT_EQ(gpupart::probe_cache_path("GPU-../../etc", "5/8"), root_.string() + "/gpupart/probe-GPU-.._.._etc-5_8.txt");
    ::unsetenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    ASSERT_NE(home, nullptr) << "the test needs HOME";
    EXPECT_EQ(gpupart::probe_cache_directory(), std::string(home) + "/.cache/gpupart");
}

// The system cache (/var/cache/gpupart, filled by gpupart-probe.service as root), here a directory of the
// test's own, trusted for the test's user where the test says so.
class SystemProbeCache : public ProbeCache {
protected:
    void SetUp() override {
        ProbeCache::SetUp();
        system_ = root_ / "system";
        fs::create_directories(system_);
        report_ = gpupart::test::h200_recorded_report();
        report_.device.uuid = "GPU-0a1b2c3d-0000-1111-2222-333344445555";
        system_file_ = (system_ / ("probe-" + report_.device.uuid + "-580.159.04.txt")).string();
        std::ofstream(system_file_) << gpupart::write_probe_report(report_);
        ::chmod(system_file_.c_str(), 0644);
    }
    gpupart::CachedProbe load(uid_t trusted) const {
        return gpupart::load_cached_probe(report_.device.uuid, "580.159.04", system_.string(), trusted);
    }
    fs::path system_;
    gpupart::ProbeReport report_;
    std::string system_file_;
};

TEST_F(SystemProbeCache, UsedWhenTheUsersOwnCacheHasNoEntry) {
    const gpupart::CachedProbe cached = load(::geteuid());
    ASSERT_EQ(cached.status.state, SourceState::ok) << cached.status.detail;
    EXPECT_EQ(cached.path, system_file_);
    EXPECT_EQ(cached.status.detail, "cached probe " + system_file_ + " (system cache)");
    EXPECT_EQ(cached.report->bit_sms, report_.bit_sms);
}

TEST_F(SystemProbeCache, TheUsersOwnEntryComesFirst) {
    const std::string own = gpupart::store_probe(report_);
    EXPECT_EQ(load(::geteuid()).path, own);
    // A broken own entry is said, never passed over for the system's.
    std::ofstream(own) << "gpupart-probe 1\n";
    EXPECT_EQ(load(::geteuid()).status.state, SourceState::failed);
}

TEST_F(SystemProbeCache, AFileRootDidNotWriteIsIgnored) {
    // Not owned by the trusted user: as a normal user the file is the test's own and root is trusted; as
    // root (CI) it is given to nobody.
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(system_file_.c_str(), 65534, 65534), 0);
    }
    gpupart::CachedProbe cached = load(0);
    EXPECT_EQ(cached.status.state, SourceState::absent);
    EXPECT_FALSE(cached.report.has_value());
    EXPECT_NE(cached.status.detail.find(system_file_ + ": owned by uid "), std::string::npos) << cached.status.detail;
    EXPECT_NE(cached.status.detail.find("ignored"), std::string::npos) << cached.status.detail;
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(system_file_.c_str(), 0, 0), 0);
    }
    // The trusted owner's, but writable by others.
    ASSERT_EQ(::chmod(system_file_.c_str(), 0666), 0);
    cached = load(::geteuid());
    EXPECT_EQ(cached.status.state, SourceState::absent);
    EXPECT_NE(cached.status.detail.find("writable by others (mode 666): ignored"), std::string::npos) << cached.status.detail;
    // A symlink there is not followed, even to a trusted file.
    const std::string link = (system_ / "probe-GPU-y-1.0.txt").string();
    ASSERT_EQ(::symlink(system_file_.c_str(), link.c_str()), 0);
    cached = gpupart::load_cached_probe("GPU-y", "1.0", system_.string(), ::geteuid());
    EXPECT_EQ(cached.status.state, SourceState::absent);
    EXPECT_NE(cached.status.detail.find("ignored"), std::string::npos) << cached.status.detail;
}
