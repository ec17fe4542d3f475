// Blocking opens and untrusted reads for every file gpupart reads that is not a registry slot, rules table or
// journal: snapshots, profiles, register images, nvdebug files, the probe cache. A FIFO, a device node
// or a directory where a file is expected gives one line and exit 1, never a hang (the old readers
// opened without O_NONBLOCK, so a FIFO blocked the open forever); /dev/zero and a huge sparse file are
// refused at once by their type or size instead of being read into memory.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "sources/probe_cache.hpp"

namespace gpupart::hostile {
namespace {

int line_count(const std::string& text) {
    int lines = 0;
    for (char c : text) lines += c == '\n';
    return lines;
}

// The command ended by itself, exit 1, with exactly one line on stderr that contains `expected`.
void expect_refused(const Outcome& outcome, const std::string& what, const std::string& expected) {
    ASSERT_FALSE(outcome.timed_out) << what << ": gpupart hung";
    EXPECT_EQ(outcome.exit_code, 1) << what << ":\n" << outcome.out << outcome.err;
    EXPECT_EQ(line_count(outcome.err), 1) << what << ":\n" << outcome.err;
    EXPECT_NE(outcome.err.find(expected), std::string::npos) << what << ":\n" << outcome.err;
}

// A FIFO, a character device (a copy of /dev/zero, made here) and a directory, each named `name`
// in its own subdirectory of `scratch`, with the word the error must use for it.
struct Hostile {
    std::string path;
    std::string kind;
};

std::vector<Hostile> hostile_files(const ScratchDir& scratch, const std::string& name) {
    std::vector<Hostile> made;
    for (const std::string kind : {"fifo", "device", "directory"}) {
        const std::string dir = scratch / kind;
        ::mkdir(dir.c_str(), 0755);
        const std::string path = dir + "/" + name;
        int made_rc = 0;
        if (kind == "fifo") made_rc = ::mkfifo(path.c_str(), 0666);
        if (kind == "device") made_rc = ::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, 5));
        if (kind == "directory") made_rc = ::mkdir(path.c_str(), 0755);
        EXPECT_EQ(made_rc, 0) << kind << " " << path;
        made.push_back({path, kind == "fifo" ? "is a FIFO" : kind == "device" ? "is a character device" : "is a directory"});
    }
    return made;
}

TEST(HostileUntrustedReads, SnapshotThatIsNotARegularFileIsRefusedInOneLine) {
    if (!is_root()) GTEST_SKIP() << "mknod needs root";
    ScratchDir scratch;
    for (const Hostile& file : hostile_files(scratch, "snapshot.json")) {
        for (const auto& args : std::vector<std::vector<std::string>>{{"gpus", "--snapshot", file.path},
                                                                      {"export", "--json", "-", "--snapshot", file.path}})
            expect_refused(gpupart(args, {}, std::nullopt, std::nullopt, 5000), args[0] + " --snapshot " + file.path,
                           file.path + ": " + file.kind);
    }
}

TEST(HostileUntrustedReads, DevZeroAndAHugeSparseSnapshotAreRefusedAtOnce) {
    ScratchDir scratch;
    const std::string huge = scratch / "huge.json";
    {
        std::ofstream(huge) << "{";
    }
    ASSERT_EQ(::truncate(huge.c_str(), 4LL << 30), 0);  // 4 GiB of holes: no disk, but reading it all would fill memory
    for (const std::string& path : {std::string("/dev/zero"), huge}) {
        const auto start = std::chrono::steady_clock::now();
        const Outcome outcome = gpupart({"gpus", "--snapshot", path}, {}, std::nullopt, std::nullopt, 5000);
        const auto took = std::chrono::steady_clock::now() - start;
        expect_refused(outcome, "--snapshot " + path, path + ": ");
        EXPECT_NE(outcome.err.find(path == huge ? "more than the" : "is a character device"), std::string::npos) << outcome.err;
        EXPECT_LT(took, std::chrono::seconds(2)) << "refused by type or size, not after reading";
    }
}

TEST(HostileUntrustedReads, ProfileThatIsNotARegularFileIsRefusedInOneLine) {
    if (!is_root()) GTEST_SKIP() << "mknod needs root";
    ScratchDir scratch;
    for (const Hostile& file : hostile_files(scratch, "evil.json")) {
        for (const std::string verb : {"show", "diff"})
            expect_refused(gpupart({"profile", verb, file.path}, {}, std::nullopt, std::nullopt, 5000),
                           "profile " + verb + " " + file.path, file.path + ": " + file.kind);
    }
}

TEST(HostileUntrustedReads, FifoInTheProfileDirectoryDoesNotHangListOrShow) {
    ScratchDir scratch;
    const std::string config = scratch / "config";
    const std::string dir = config + "/gpupart/profiles";
    ASSERT_EQ(::mkdir(config.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((config + "/gpupart").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    ASSERT_EQ(::mkfifo((dir + "/evil.json").c_str(), 0666), 0);
    const std::vector<std::string> env = {"XDG_CONFIG_HOME=" + config, "HOME=" + scratch.path};
    const Outcome list = gpupart({"profile", "list"}, env, std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(list.timed_out) << "profile list hung on a FIFO in the profile directory";
    EXPECT_NE(list.err.find(dir + "/evil.json: is a FIFO"), std::string::npos) << "reported, not skipped:\n" << list.err;
    expect_refused(gpupart({"profile", "show", "evil"}, env, std::nullopt, std::nullopt, 5000), "profile show evil",
                   dir + "/evil.json: is a FIFO");
}

TEST(HostileUntrustedReads, RegisterImageAndNvdebugFilesThatAreFifosDoNotHang) {
    ScratchDir scratch;
    const std::string image = scratch / "bar0.txt";
    ASSERT_EQ(::mkfifo(image.c_str(), 0666), 0);
    const Outcome mmio = gpupart({"source", "mmio", "--mmio-image", image}, {}, std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(mmio.timed_out) << "source mmio hung on a FIFO register image";
    EXPECT_NE((mmio.out + mmio.err).find(image + ": is a FIFO"), std::string::npos) << mmio.out << mmio.err;

    // Every file nvdebug's directory holds is a FIFO here: each must come back as an unknown fact.
    const std::string gpu0 = scratch / "gpu0";
    ASSERT_EQ(::mkdir(gpu0.c_str(), 0755), 0);
    for (const std::string name : {"num_gpcs", "num_tpc_per_gpc", "num_ces", "gpc_mask", "num_tpc_mask0"})
        ASSERT_EQ(::mkfifo((gpu0 + "/" + name).c_str(), 0666), 0);
    const Outcome nvdebug = gpupart({"source", "nvdebug", "--nvdebug-root", scratch.path}, {}, std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(nvdebug.timed_out) << "source nvdebug hung on FIFOs in --nvdebug-root";
    EXPECT_NE((nvdebug.out + nvdebug.err).find(gpu0 + "/num_gpcs: is a FIFO"), std::string::npos) << nvdebug.out << nvdebug.err;
}

// Loads the probe cache in a forked child with a 5 s alarm (a hang kills the child, and the test sees a
// signal instead of a status); what the child judged, and the status detail it read.
struct CacheRead {
    bool finished = false;  // exited rather than killed by the alarm
    bool as_expected = false;
    std::string detail;
};

template <typename Load, typename Expected>
CacheRead read_cache_in_child(Load load, Expected expected) {
    CacheRead result;
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return result;
    const pid_t child = ::fork();
    if (child == 0) {
        ::alarm(5);
        const CachedProbe cached = load();
        const std::string detail = cached.status.detail;
        (void)!::write(pipe_fds[1], detail.data(), detail.size());
        ::_exit(expected(cached) ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    char buffer[512];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) result.detail.append(buffer, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    result.finished = WIFEXITED(status);
    result.as_expected = result.finished && WEXITSTATUS(status) == 0;
    return result;
}

// The probe cache is read only when a live GPU is shown, so it is read here in a child with a deadline.
TEST(HostileUntrustedReads, FifoOrHugeFileInTheProbeCacheIsAFailedSourceNotAHang) {
    ScratchDir scratch;
    ASSERT_EQ(::setenv("XDG_CACHE_HOME", scratch.path.c_str(), 1), 0);
    const std::string path = probe_cache_path("GPU-x", "1.0");
    ASSERT_EQ(::mkdir((scratch / "gpupart").c_str(), 0755), 0);
    for (const std::string kind : {"fifo", "huge"}) {
        ::unlink(path.c_str());
        if (kind == "fifo") {
            ASSERT_EQ(::mkfifo(path.c_str(), 0666), 0);
        } else {
            std::ofstream(path) << "gpupart-probe 1\n";
            ASSERT_EQ(::truncate(path.c_str(), 1LL << 32), 0);
        }
        const CacheRead read = read_cache_in_child([] { return load_cached_probe("GPU-x", "1.0"); },
                                                   [](const CachedProbe& cached) { return cached.status.state == SourceState::failed; });
        const std::string& detail = read.detail;
        ASSERT_TRUE(read.finished) << kind << ": the cache read hung";
        EXPECT_TRUE(read.as_expected) << kind << ": " << detail;
        EXPECT_NE(detail.find(path + (kind == "fifo" ? ": is a FIFO" : ": the probe cache is")), std::string::npos) << detail;
    }
    ::unsetenv("XDG_CACHE_HOME");
}

// The system cache (/var/cache/gpupart) is written by root only, but a FIFO or device there must not hang
// every user's live view either: ignored, with why, even from a trusted owner.
TEST(HostileUntrustedReads, FifoInTheSystemProbeCacheIsIgnoredNotAHang) {
    ScratchDir scratch;
    ASSERT_EQ(::setenv("XDG_CACHE_HOME", (scratch / "own").c_str(), 1), 0);
    const std::string path = scratch / "probe-GPU-x-1.0.txt";
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    const CacheRead read = read_cache_in_child(
        [&] { return load_cached_probe("GPU-x", "1.0", scratch.path, ::geteuid()); },
        [](const CachedProbe& cached) { return cached.status.state == SourceState::absent && !cached.report; });
    const std::string& detail = read.detail;
    ASSERT_TRUE(read.finished) << "the system cache read hung";
    EXPECT_TRUE(read.as_expected) << detail;
    EXPECT_NE(detail.find(path + ": is a FIFO"), std::string::npos) << detail;
    EXPECT_NE(detail.find("ignored"), std::string::npos) << detail;
    ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace gpupart::hostile
