// Hostile component files (tests/hostile's concerns, for the SMLP): whatever sits at
// "<user dir>/<name>.smlp" (a link, a FIFO, a directory, a file of another size, owner, mode, layout
// or with corrupt queues) is refused in one line, never followed, blocked on, mapped past its end or
// trusted by the rules.
#include <cstddef>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

class SmlpHostile : public ::testing::Test {
protected:
    void SetUp() override { path = registry.user_dir() + "/h.smlp"; }

    // A genuine component (made through the API, closed again) to tamper with.
    void make_genuine() {
        const gpupart_smlp_config config = config_of(8, 2, 2);
        gpupart_smlp* smlp = nullptr;
        ASSERT_EQ(gpupart_smlp_open("h", &config, &smlp), 0) << gpupart_smlp_last_error();
        gpupart_smlp_close(smlp);
    }

    template <typename T>
    void poke(size_t offset, T value) {
        const int fd = ::open(path.c_str(), O_RDWR);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::pwrite(fd, &value, sizeof value, static_cast<off_t>(offset)), static_cast<ssize_t>(sizeof value));
        ::close(fd);
    }

    // Opening (joining) fails with `error`, in one line that contains `words`.
    void expect_refused(int error, const char* words) {
        gpupart_smlp* smlp = nullptr;
        EXPECT_EQ(gpupart_smlp_open("h", nullptr, &smlp), error);
        EXPECT_EQ(smlp, nullptr);
        const char* why = gpupart_smlp_last_error();
        EXPECT_TRUE(one_line(why));
        EXPECT_NE(std::strstr(why, words), nullptr) << why;
    }

    TempRegistry registry;
    std::string path;
};

constexpr size_t record_offset(unsigned index) { return 1024 + 640 * index; }

TEST_F(SmlpHostile, SymlinkIsNeverFollowed) {
    const std::string target = registry.root + "/elsewhere";
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    expect_refused(ELOOP, "symbolic link");
    const gpupart_smlp_config config = config_of(8, 2, 2);
    gpupart_smlp* smlp = nullptr;
    EXPECT_EQ(gpupart_smlp_open("h", &config, &smlp), ELOOP);
    EXPECT_NE(::access(target.c_str(), F_OK), 0) << "nothing was created through the link";
}

TEST_F(SmlpHostile, FifoAndDirectoryAreRefusedWithoutBlocking) {
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    expect_refused(EINVAL, "not a regular file");
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
    gpupart_smlp* smlp = nullptr;
    EXPECT_NE(gpupart_smlp_open("h", nullptr, &smlp), 0);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
}

TEST_F(SmlpHostile, WrongSizeModeOrOwnerIsRefused) {
    make_genuine();
    ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
    expect_refused(EPROTO, "4096 bytes");
    ASSERT_EQ(::unlink(path.c_str()), 0);
    make_genuine();
    ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
    expect_refused(EPERM, "writable by others");
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
        expect_refused(EPERM, "belongs to uid 65534");
    }
}

TEST_F(SmlpHostile, WrongLayoutOrCorruptQueuesAreRefused) {
    make_genuine();
    poke<uint32_t>(offsetof(gpupart_smlp_component, layout_version), 4u);
    expect_refused(EPROTO, "registry layout 4");
    poke<uint32_t>(offsetof(gpupart_smlp_component, layout_version), GPUPART_REGISTRY_LAYOUT_VERSION);
    poke<uint32_t>(offsetof(gpupart_smlp_component, h), 3u);
    expect_refused(EPROTO, "does not divide");
    poke<uint32_t>(offsetof(gpupart_smlp_component, h), 2u);
    // Three FQ records with M = 2.
    for (unsigned i = 0; i < 3; ++i) {
        poke<int32_t>(record_offset(i) + offsetof(gpupart_smlp_request, pid), 1);
        poke<uint32_t>(record_offset(i) + offsetof(gpupart_smlp_request, level_count), 1u);
        poke<uint32_t>(record_offset(i) + offsetof(gpupart_smlp_request, queue), GPUPART_SMLP_FQ);
    }
    expect_refused(EPROTO, "more than M");
}

TEST_F(SmlpHostile, CorruptionAfterOpenIsAnErrorNotACrash) {
    make_genuine();
    gpupart_smlp* smlp = nullptr;
    ASSERT_EQ(gpupart_smlp_open("h", nullptr, &smlp), 0) << gpupart_smlp_last_error();
    const uint32_t levels[] = {4, 3, 2, 1};
    const gpupart_smlp_request_spec spec{1, levels, 4, 0, "x"};
    gpupart_smlp_grant grant{};
    ASSERT_EQ(gpupart_smlp_lock(smlp, &spec, &grant), 0);
    unsigned held = 0;
    const gpupart_smlp_file file = read_component(path);
    while (file.requests[held].queue != GPUPART_SMLP_SQ) ++held;
    poke<uint32_t>(record_offset(held) + offsetof(gpupart_smlp_request, granted_tpcs), 6u);  // holds 8, counts 6
    gpupart_smlp_grant other{};
    EXPECT_EQ(gpupart_smlp_lock(smlp, &spec, &other), EPROTO);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
    EXPECT_NE(std::strstr(gpupart_smlp_last_error(), "counts 6"), nullptr) << gpupart_smlp_last_error();
    EXPECT_EQ(gpupart_smlp_unlock(smlp, &grant), EPROTO);
    poke<uint32_t>(record_offset(held) + offsetof(gpupart_smlp_request, granted_tpcs), 8u);
    EXPECT_EQ(gpupart_smlp_unlock(smlp, &grant), 0) << gpupart_smlp_last_error();
    gpupart_smlp_close(smlp);
}

}  // namespace
