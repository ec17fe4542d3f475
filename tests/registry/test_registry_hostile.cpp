// What the registry withstands: slots of other layouts, truncated, forged or another user's, and writers killed or racing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry/registry.hpp"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"
#include "controller_test_fixture.hpp"
#include "registry_test_support.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using gpupart::test::control_with;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;
using gpupart::test::MappedSlot;
using gpupart::test::user_dir_in;
using gpupart::test::allowed_on;
using gpupart::test::kTestGpu;
using gpupart::test::register_self;
using gpupart::test::thrown_message;
using gpupart::test::wait_exit_code;

namespace {

int g_pause_pipe = -1;  // the write end a paused writer signals on (a hook cannot capture)

}  // namespace

TEST(Registry, UnknownLayoutVersionIsRefusedClearly) {
    TempRegistry registry_dir;
    const std::string path = register_self(registry_dir.dir, *process_start_time(::getpid()));
    {
        MappedSlot mapped(path, true);
        gpupart_store32(&mapped.slot->header.layout_version, 999);
    }
    const Registry registry(registry_dir.dir);
    const auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].record.has_value());
    EXPECT_EQ(entries[0].problem, path + ": registry layout version 999 is not the 5 this gpupart reads; use the gpupart that "
                                         "matches the shim of this process");
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.set_mask(::getpid(), kTestGpu, true, TpcMask::range(0, 3), TpcMask::range(0, 3)); }).find("version 999"),
              std::string::npos);
}

// Layout 4 (no app block) and layout 5 have the same size: only the version tells them apart.
TEST(Registry, ALayoutFourSlotIsRefusedByItsVersion) {
    TempRegistry registry_dir;
    const std::string path = register_self(registry_dir.dir, *process_start_time(::getpid()));
    {
        MappedSlot mapped(path, true);
        gpupart_store32(&mapped.slot->header.layout_version, 4);
    }
    const auto entries = Registry(registry_dir.dir).list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].record.has_value());
    EXPECT_EQ(entries[0].problem, path + ": registry layout version 4 is not the 5 this gpupart reads; use the gpupart that "
                                         "matches the shim of this process");
}

TEST(Registry, TruncatedOrForeignFilesAreRefused) {
    TempRegistry registry_dir;
    const std::string path = user_dir_in(registry_dir.dir) + "/1-1.slot";
    { std::ofstream(path) << "not a slot"; }
    const auto entries = Registry(registry_dir.dir).list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].problem, path + ": not a gpupart slot file (size 10, expected 8192): truncated or not a slot");
}

// Layout 3 (one mask for every GPU, 4 KiB slots) and layout 4 refuse each other: a slot an older shim
// made is named by its version, never read as a mask for some GPU.
TEST(Registry, ALayoutThreeSlotIsRefusedByItsVersion) {
    TempRegistry registry_dir;
    const std::string path = register_self(registry_dir.dir, *process_start_time(::getpid()), "0xf");
    {
        MappedSlot mapped(path, true);
        gpupart_store32(&mapped.slot->header.layout_version, 3);
        gpupart_store32(&mapped.slot->header.file_size, 4096);
    }
    ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // as a layout-3 shim makes them
    const Registry registry(registry_dir.dir);
    const auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].problem, path + ": registry layout version 3 is not the 5 this gpupart reads; use the gpupart that "
                                         "matches the shim of this process");
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.set_mask(::getpid(), kTestGpu, true, TpcMask::range(0, 3), TpcMask::range(0, 3)); }).find("version 3"),
              std::string::npos);
}

TEST(Registry, OtherUsersCannotChangeAProcess) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user (CI runs as root)";
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xf");  // owned by root, mode 0664
    const pid_t intruder = ::fork();
    if (intruder == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
        const Registry registry(registry_dir.dir);
        const std::string error = thrown_message<RegistryError>([&] { registry.set_mask(child.pid, kTestGpu, true, TpcMask::range(9, 16), TpcMask::range(0, 127)); });
        if (error.find("belongs to root: only its owner, root or members of the registry's admin group may change it") == std::string::npos)
            ::_exit(11);
        // Reading stays open to everybody.
        const SlotRecord seen = registry.find_live(child.pid);
        ::_exit(seen.control && allowed_on(*seen.control).to_list() == "0-3" ? 0 : 12);
    }
    EXPECT_EQ(wait_exit_code(intruder), 0);
    EXPECT_EQ(allowed_on(*Registry(registry_dir.dir).find_live(child.pid).control).to_list(), "0-3");  // unchanged
}

TEST(Registry, WriterKilledMidUpdateLeavesNothingStuck) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xf");
    const Registry registry(registry_dir.dir, gpupart::test::builtin_h200());
    const std::string path = registry.list().at(0).path;
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t writer = ::fork();
    if (writer == 0) {
        g_pause_pipe = ready[1];
        // Stops at store 4 (the payload) with the lock held and seq odd: a writer killed mid-update.
        SlotFile::set_store_hook_for_test([](int store) {
            if (store != 4) return;
            const char byte = 'x';
            if (::write(g_pause_pipe, &byte, 1) != 1) ::_exit(1);
            ::pause();
        });
        SlotFile slot = SlotFile::open(path, true);
        slot.write_control(kTestGpu, true, TpcMask::range(20, 23), TpcMask::range(0, 127));
        ::_exit(0);
    }
    char byte;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    ::kill(writer, SIGKILL);
    EXPECT_EQ(wait_exit_code(writer), 128 + SIGKILL);

    // Readers never see the half-written block: they see the block before it, saved by the dead
    // writer, and that the writer died.
    const SlotRecord torn = registry.find_live(child.pid);
    ASSERT_TRUE(torn.control.has_value());
    EXPECT_TRUE(torn.writer_died);
    EXPECT_EQ(allowed_on(*torn.control).to_list(), "0,8,16,24");  // descriptor bits 0-3, gpc0
    EXPECT_EQ(torn.control->generation, 1u);
    // The kernel dropped the dead writer's lock: the next writer completes the block at once.
    const auto started = std::chrono::steady_clock::now();
    const SlotRecord fixed = registry.set_mask(child.pid, kTestGpu, true, gpupart::test::tpcs({1, 9, 17, 25, 32, 39, 46, 53}),
                                               TpcMask::range(0, 65));
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500));
    ASSERT_TRUE(fixed.control.has_value());
    EXPECT_EQ(allowed_on(*fixed.control).to_list(), "1,9,17,25,32,39,46,53");  // gpc1
    EXPECT_EQ(fixed.control->generation, 2u);
}

TEST(Registry, ConcurrentWritersAndReadersNeverSeeATornMask) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0x1");
    const Registry registry(registry_dir.dir);
    const std::string path = registry.list().at(0).path;
    const auto run_for = std::chrono::milliseconds(1500);
    // Start from a block that already has the shape every write gives it (four equal words).
    SlotFile::open(path, true).write_control(kTestGpu, true, TpcMask::from_words(0x100000001ULL, 0x100000001ULL),
                                             TpcMask::from_words(0x100000001ULL, 0x100000001ULL));

    // Writers store masks whose four words are all equal, and real_tpcs equal to the mask: any mix of
    // two writes shows as unequal words.
    std::vector<pid_t> writers;
    for (int w = 0; w < 2; ++w) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            SlotFile slot = SlotFile::open(path, true);
            std::mt19937 random(static_cast<unsigned>(w + 1));
            const auto end = std::chrono::steady_clock::now() + run_for;
            while (std::chrono::steady_clock::now() < end) {
                const auto word = static_cast<std::uint32_t>(random() | 1u);
                const std::uint64_t wide = word | (static_cast<std::uint64_t>(word) << 32);
                const TpcMask mask = TpcMask::from_words(wide, wide);
                slot.write_control(kTestGpu, true, mask, mask);
            }
            ::_exit(0);
        }
        writers.push_back(pid);
    }
    std::vector<pid_t> readers;
    for (int r = 0; r < 2; ++r) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const MappedSlot mapped(path, false);  // as the shim reads it
            long consistent = 0;
            const auto end = std::chrono::steady_clock::now() + run_for;
            while (std::chrono::steady_clock::now() < end) {
                gpupart_control copy{};
                if (gpupart_control_read(&mapped.slot->control, &copy, 16) != 0) continue;
                const gpupart_control_gpu& entry = copy.current.gpus[0];
                if (copy.current.count != 1) ::_exit(1);
                for (int i = 1; i < 4; ++i)
                    if (entry.allowed[i] != entry.allowed[0] || entry.real_tpcs[i] != entry.allowed[0]) ::_exit(1);  // torn
                ++consistent;
            }
            ::_exit(consistent > 100 ? 0 : 2);
        }
        readers.push_back(pid);
    }
    for (pid_t pid : readers) EXPECT_EQ(wait_exit_code(pid), 0) << "1: torn read, 2: too few consistent reads";
    for (pid_t pid : writers) EXPECT_EQ(wait_exit_code(pid), 0);
    const SlotRecord last = registry.find_live(child.pid);
    ASSERT_TRUE(last.control.has_value());
    EXPECT_GT(last.control->generation, 100u);
}

// The same protocol with threads sharing one mapping, so ThreadSanitizer (--preset tsan) sees every access.
TEST(Registry, ThreadsSharingAMappingNeverSeeATornMask) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0x1");
    const std::string path = Registry(registry_dir.dir).list().at(0).path;
    SlotFile::open(path, true).write_control(kTestGpu, true, TpcMask::from_words(0x100000001ULL, 0x100000001ULL),
                                             TpcMask::from_words(0x100000001ULL, 0x100000001ULL));
    std::atomic<bool> stop{false};
    std::atomic<long> torn{0};
    std::atomic<long> consistent{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w)
        threads.emplace_back([&, w] {
            SlotFile slot = SlotFile::open(path, true);  // its own open file description: its own OFD lock
            std::uint32_t word = static_cast<std::uint32_t>(w) << 16;
            while (!stop.load()) {
                ++word;
                const std::uint64_t wide = word | (static_cast<std::uint64_t>(word) << 32);
                slot.write_control(kTestGpu, true, TpcMask::from_words(wide, wide), TpcMask::from_words(wide, wide));
            }
        });
    const MappedSlot shared(path, false);
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&] {
            while (!stop.load()) {
                gpupart_control copy{};
                if (gpupart_control_read(&shared.slot->control, &copy, 16) != 0) continue;
                bool same = true;
                const gpupart_control_gpu& entry = copy.current.gpus[0];
                same = copy.current.count == 1;
                for (int i = 1; i < 4; ++i) same = same && entry.allowed[i] == entry.allowed[0] && entry.real_tpcs[i] == entry.allowed[0];
                (same ? consistent : torn)++;
            }
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    stop = true;
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_GT(consistent.load(), 100);
}

// Anybody may create files in the (sticky, world-writable) registry: a file claiming another user's
// process is a forgery, shown as a problem and never written to.
TEST(Registry, ForgedSlotsAreIgnored) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create files owned by another user (CI runs as root)";
    TempRegistry registry_dir;
    const std::string path = register_self(registry_dir.dir, *process_start_time(::getpid()));
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);  // "nobody" made a slot that claims this root process
    const Registry registry(registry_dir.dir);
    const auto entries = registry.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].record.has_value());
    EXPECT_EQ(entries[0].problem, fmt::format("{}: belongs to nobody but lies in the directory of root: ignored", path));
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.set_mask(::getpid(), kTestGpu, true, TpcMask::range(0, 3), TpcMask::range(0, 3)); }).find("ignored"),
              std::string::npos);
    EXPECT_NE(thrown_message<RegistryError>([&] { registry.find_live(::getpid()); }).find("ignored"), std::string::npos);
}

TEST(Registry, SlotClaimingItsOwnUserForAnotherUsersProcessIsIgnored) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create files owned by another user (CI runs as root)";
    TempRegistry registry_dir;
    // The file, its directory and its header agree (nobody), but the process it names runs as root.
    const std::string nobody_dir = registry_dir.dir + "/u65534";
    ASSERT_EQ(::mkdir(nobody_dir.c_str(), 0755), 0);
    ASSERT_EQ(::chown(nobody_dir.c_str(), 65534, 65534), 0);
    const gpupart_control_payload initial = control_with(nullptr, nullptr);
    gpupart_slot_file* slot = nullptr;
    char path[512];
    ASSERT_EQ(gpupart_slot_create(nobody_dir.c_str(), ::getpid(), *process_start_time(::getpid()), 65534, "forged",
                                  "test", "", nullptr, &initial, &slot, path, sizeof path), 0);
    ::munmap(slot, GPUPART_SLOT_FILE_SIZE);
    ASSERT_EQ(::chown(path, 65534, 65534), 0);
    const auto entries = Registry(registry_dir.dir).list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].problem, fmt::format("{}: process {} runs as root but the file belongs to nobody: ignored", path, ::getpid()));
}
