// The registry with real shared memory (files on /dev/shm), real forked processes and SIGKILL.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include "registry/registry.hpp"
#include "registry/registry_slot.h"
#include "controller_test_fixture.hpp"
#include "registry_test_support.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using gpupart::test::control_with;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;
using gpupart::test::user_dir_in;
using gpupart::test::allowed_on;
using gpupart::test::has_mask_on;
using gpupart::test::kTestGpu;
using gpupart::test::register_self;
using gpupart::test::thrown_message;
using gpupart::test::wait_exit_code;

TEST(Registry, ListsARegisteredLiveProcess) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xf");
    const Registry registry(registry_dir.dir);
    const auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_TRUE(entries[0].record.has_value()) << entries[0].problem;
    const SlotRecord& record = *entries[0].record;
    EXPECT_EQ(record.pid, child.pid);
    EXPECT_EQ(record.start_time, *process_start_time(child.pid));
    EXPECT_EQ(record.uid, ::getuid());
    EXPECT_EQ(record.command, "registered-child --test");
    EXPECT_EQ(entries[0].liveness, Liveness::alive);
    ASSERT_TRUE(record.control.has_value());
    EXPECT_TRUE(has_mask_on(*record.control));
    EXPECT_EQ(allowed_on(*record.control).to_list(), "0-3");
    EXPECT_EQ(record.control->generation, 1u);
}

// Layout 5's header.job ($GPUPART_JOB): what the shim stores and what front ends read are printable ASCII only.
TEST(Registry, TheSchedulerJobIsPrintableAsciiOnly) {
    TempRegistry registry_dir;
    const gpupart_control_payload initial = control_with(nullptr, "0xffffffffffffffffffffffffffffffff");
    gpupart_slot_file* slot = nullptr;
    char path[512];
    ASSERT_EQ(gpupart_slot_create(user_dir_in(registry_dir.dir).c_str(), ::getpid(), *process_start_time(::getpid()),
                                  ::getuid(), "test-self", "test", "", "slurm:12.0\x1b[2J\t\xc3\xa9!", &initial, &slot,
                                  path, sizeof path),
              0);
    EXPECT_EQ(SlotFile::open(path, false).read().job, "slurm:12.0[2J!");
    // A forged slot's bytes (no NUL in all 64, escapes) are filtered by the reader as well.
    std::memset(slot->header.job, 'j', sizeof slot->header.job);
    slot->header.job[3] = '\x1b';
    slot->header.job[4] = '\n';
    EXPECT_EQ(SlotFile::open(path, false).read().job, std::string(62, 'j'));
    ::munmap(slot, GPUPART_SLOT_FILE_SIZE);
    // A job longer than the field keeps its first 63 characters.
    char kept[64];
    gpupart_printable_ascii(std::string(100, 'x').c_str(), kept, sizeof kept);
    EXPECT_EQ(std::string(kept), std::string(63, 'x'));
}

TEST(Registry, SetMaskReachesTheRegisteredProcess) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xf");
    const Registry registry(registry_dir.dir, gpupart::test::builtin_h200());
    // gpc1 of the built-in H200 in TPC numbers; its slot holds them as descriptor bits 9-16.
    const TpcMask gpc1 = gpupart::test::tpcs({1, 9, 17, 25, 32, 39, 46, 53});
    const SlotRecord after = registry.set_mask(child.pid, kTestGpu, true, gpc1, TpcMask::range(0, 65));
    ASSERT_TRUE(after.control.has_value());
    EXPECT_EQ(allowed_on(*after.control).to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(after.control->generation, 2u);
    EXPECT_EQ(after.control->writer_pid, ::getpid());
    // Another process (a fresh fork) reads the same block through its own mapping; without the map it sees
    // the slot's descriptor bits.
    const pid_t reader = ::fork();
    if (reader == 0) {
        const SlotRecord seen = registry.find_live(child.pid);
        const SlotRecord raw = Registry(registry_dir.dir).find_live(child.pid);
        ::_exit(seen.control && allowed_on(*seen.control).to_list() == "1,9,17,25,32,39,46,53" && raw.control &&
                        allowed_on(*raw.control).to_list() == "9-16"
                    ? 0
                    : 1);
    }
    EXPECT_EQ(wait_exit_code(reader), 0);
}

TEST(Registry, ExitedProcessIsReportedAndReclaimed) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, nullptr);
    const pid_t pid = child.pid;
    child.finish();  // the child exits without removing its slot, as a killed shim would
    const Registry registry(registry_dir.dir);
    auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].liveness, Liveness::gone);
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.set_mask(pid, kTestGpu, true, TpcMask::range(0, 3), TpcMask::range(0, 3)); }).find("no process"),
              std::string::npos);
    EXPECT_EQ(registry.collect_garbage(), 1);
    EXPECT_TRUE(registry.list().empty());
}

TEST(Registry, ReusedPidIsNeverTakenForTheRegisteredProcess) {
    TempRegistry registry_dir;
    // A slot for "this pid" but an older start time: the process that registered is gone and the
    // kernel gave its pid to us.
    const std::uint64_t now = *process_start_time(::getpid());
    register_self(registry_dir.dir, now - 1);
    const Registry registry(registry_dir.dir);
    const auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].liveness, Liveness::reused);
    EXPECT_EQ(thrown_message<RegistryError>([&] { registry.find_live(::getpid()); }),
              fmt::format("process {} is not the one gpupart registered: that one exited and its pid now belongs to another process",
                          ::getpid()));
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.set_mask(::getpid(), kTestGpu, true, TpcMask::range(0, 3), TpcMask::range(0, 3)); }).find("not the one"),
              std::string::npos);
    EXPECT_EQ(registry.collect_garbage(), 1);
}

TEST(Registry, BadPidsAreOneLineErrors) {
    TempRegistry registry_dir;
    const Registry registry(registry_dir.dir);
    EXPECT_EQ(thrown_message<RegistryError>([&] { registry.find_live(-5); }), "-5 is not a process id");
    EXPECT_EQ(thrown_message<RegistryError>([&] { registry.find_live(999999999); }), "no process 999999999 is running");
    const std::string unregistered = thrown_message<RegistryError>([&] { registry.find_live(::getpid()); });
    EXPECT_EQ(unregistered.rfind(fmt::format("process {} is not partitioned by gpupart", ::getpid()), 0), 0u) << unregistered;
}

TEST(Registry, NamedRootIsCreatedStickyAndUserDirectoriesPrivate) {
    TempRegistry parent;
    const std::string dir = parent.dir + "/registry";
    char why[512] = "";
    ASSERT_EQ(gpupart_registry_root_check(dir.c_str(), 1, why, sizeof why), 0) << why;
    const auto perms = std::filesystem::status(dir).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::sticky_bit, std::filesystem::perms::sticky_bit);
    EXPECT_EQ(perms & std::filesystem::perms::others_write, std::filesystem::perms::others_write);
    EXPECT_EQ(gpupart_registry_root_check(dir.c_str(), 1, why, sizeof why), 0);  // idempotent
    const std::string user_dir = user_dir_in(dir);
    EXPECT_EQ(user_dir, dir + "/u" + std::to_string(::getuid()));
    EXPECT_EQ(std::filesystem::status(user_dir).permissions(), std::filesystem::perms(0755));
    EXPECT_EQ(user_dir_in(dir), user_dir);  // the same one every time
}

TEST(Registry, HexMasksParseAsTheShimReadsThem) {
    std::uint32_t words[4];
    ASSERT_EQ(gpupart_parse_hex_mask("0x1fe00", words), 0);
    EXPECT_EQ(words[0], 0x1fe00u);
    ASSERT_EQ(gpupart_parse_hex_mask(TpcMask::range(60, 127).to_hex().c_str(), words), 0);
    EXPECT_EQ(mask_from_words(words), TpcMask::range(60, 127));
    const std::string too_wide = "0x1" + std::string(32, '0');
    EXPECT_EQ(gpupart_parse_hex_mask(too_wide.c_str(), words), -EINVAL);
    EXPECT_EQ(gpupart_parse_hex_mask("0x", words), -EINVAL);
    EXPECT_EQ(gpupart_parse_hex_mask("12", words), -EINVAL);
    EXPECT_EQ(gpupart_parse_hex_mask("0xfg", words), -EINVAL);
    EXPECT_EQ(gpupart_parse_hex_mask(nullptr, words), -EINVAL);
}

// Slots hold launch-descriptor bits, the shim's language; a registry that knows the GPU's map reads them as
// TPC numbers, one that does not reads the bits as they are (unnumbered) and refuses to write, since it
// cannot say which bits a TPC number is.
TEST(Registry, SlotBitsReadAsTpcNumbersOnlyThroughTheGpusMap) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0x1fe00");  // descriptor bits 9-16: gpc1 of the H200
    const SlotRecord mapped = Registry(registry_dir.dir, gpupart::test::builtin_h200()).find_live(child.pid);
    ASSERT_TRUE(mapped.control.has_value());
    ASSERT_NE(mapped.control->gpu(kTestGpu), nullptr);
    EXPECT_TRUE(mapped.control->gpu(kTestGpu)->numbered);
    EXPECT_EQ(allowed_on(*mapped.control).to_list(), "1,9,17,25,32,39,46,53");

    const Registry unmapped(registry_dir.dir);
    const SlotRecord raw = unmapped.find_live(child.pid);
    ASSERT_TRUE(raw.control.has_value());
    ASSERT_NE(raw.control->gpu(kTestGpu), nullptr);
    EXPECT_FALSE(raw.control->gpu(kTestGpu)->numbered);
    EXPECT_EQ(allowed_on(*raw.control).to_list(), "9-16");
    const auto listed = unmapped.list();
    ASSERT_EQ(listed.size(), 1u);
    ASSERT_TRUE(listed[0].record && listed[0].record->control);
    EXPECT_EQ(allowed_on(*listed[0].record->control).to_list(), "9-16");

    const std::string refused =
        thrown_message<RegistryError>([&] { unmapped.set_mask(child.pid, kTestGpu, true, gpupart::test::tpcs({0, 8}), TpcMask::range(0, 65)); });
    EXPECT_NE(refused.find("does not know which launch-descriptor bit each TPC number is"), std::string::npos) << refused;
    EXPECT_NE(refused.find("nothing changed"), std::string::npos) << refused;
    EXPECT_EQ(refused.find('\n'), std::string::npos);
    const SlotRecord after = unmapped.find_live(child.pid);
    EXPECT_EQ(allowed_on(*after.control).to_list(), "9-16");
    EXPECT_EQ(after.control->generation, raw.control->generation);
}
