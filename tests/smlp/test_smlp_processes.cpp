// The SMLP's API (gpupart/smlp.h) between real processes on one component file: creating and joining,
// Lemma 13 with several processes hammering, timeouts, a holder killed with SIGKILL, a locker killed
// inside the mutex.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

__extension__ typedef unsigned __int128 Mask128;

gpupart_smlp_request_spec spec_of(const std::vector<uint32_t>& levels, int32_t priority = 1, const char* label = "t") {
    return gpupart_smlp_request_spec{priority, levels.data(), static_cast<uint32_t>(levels.size()), 0, label};
}

uint32_t fifo_length(const std::string& path) {
    const gpupart_smlp_file file = read_component(path);
    return gpupart_smlp_core_count(&file, GPUPART_SMLP_FQ);
}

TEST(SmlpProcesses, OpenCreatesJoinsAndChecksSettings) {
    TempRegistry registry;
    const gpupart_smlp_config config = config_of(8, 2, 2);
    gpupart_smlp* made = nullptr;
    ASSERT_EQ(gpupart_smlp_open("comp", &config, &made), 0) << gpupart_smlp_last_error();
    gpupart_smlp* joined = nullptr;
    ASSERT_EQ(gpupart_smlp_open("comp", nullptr, &joined), 0) << gpupart_smlp_last_error();
    gpupart_smlp* refused = nullptr;
    const gpupart_smlp_config other = config_of(8, 1, 2);
    EXPECT_EQ(gpupart_smlp_open("comp", &other, &refused), EEXIST);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
    EXPECT_NE(std::strstr(gpupart_smlp_last_error(), "its h is 2"), nullptr) << gpupart_smlp_last_error();
    EXPECT_EQ(refused, nullptr);
    EXPECT_EQ(gpupart_smlp_open("missing", nullptr, &refused), ENOENT);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
    EXPECT_EQ(gpupart_smlp_open("../escape", &config, &refused), EINVAL);

    const std::string path = registry.user_dir() + "/comp.smlp";
    struct stat info {};
    ASSERT_EQ(::lstat(path.c_str(), &info), 0);
    EXPECT_TRUE(S_ISREG(info.st_mode));
    EXPECT_EQ(info.st_mode & 07777, 0644u);
    EXPECT_EQ(info.st_size, static_cast<off_t>(sizeof(gpupart_smlp_file)));

    const std::vector<uint32_t> levels{4, 3, 2, 1};
    gpupart_smlp_request_spec spec = spec_of(levels);
    gpupart_smlp_grant grant{};
    ASSERT_EQ(gpupart_smlp_lock(joined, &spec, &grant), 0) << gpupart_smlp_last_error();
    EXPECT_EQ(grant.count, 8u);
    EXPECT_EQ(grant.allowed[0], 0xffu);
    EXPECT_TRUE(grant.disable_mask == ~static_cast<Mask128>(0xff));
    const gpupart_smlp_file held = read_component(path);
    EXPECT_EQ(gpupart_smlp_core_count(&held, GPUPART_SMLP_SQ), 1u);
    EXPECT_EQ(gpupart_smlp_core_count(&held, GPUPART_SMLP_FREE), GPUPART_SMLP_MAX_REQUESTS - 1);
    EXPECT_EQ(gpupart_smlp_unlock(made, &grant), 0) << "any handle of the holding process may unlock";
    EXPECT_EQ(gpupart_smlp_unlock(joined, &grant), EINVAL);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
    const std::vector<uint32_t> too_many{5, 4, 3, 2, 1};
    spec = spec_of(too_many);
    EXPECT_EQ(gpupart_smlp_lock(joined, &spec, &grant), EINVAL);
    EXPECT_EQ(gpupart_smlp_close(made), 0);
    EXPECT_EQ(gpupart_smlp_close(joined), 0);
    const gpupart_smlp_file after = read_component(path);
    EXPECT_EQ(after.header.satisfied, 1u);
    EXPECT_EQ(after.header.finalized, 1u);
    EXPECT_EQ(after.header.seq % 2, 0u);
}

// Grants are used as libsmctrl masks, which are TPC numbers: a component made before the numbering holds
// descriptor bits, and joining it would grant other TPCs than it names.
TEST(SmlpProcesses, ComponentsAreNumberedAndOldOnesAreRefused) {
    TempRegistry registry;
    const gpupart_smlp_config config = config_of(8, 2, 2);
    gpupart_smlp* made = nullptr;
    ASSERT_EQ(gpupart_smlp_open("numbered", &config, &made), 0) << gpupart_smlp_last_error();
    const std::string path = registry.user_dir() + "/numbered.smlp";
    EXPECT_EQ(read_component(path).header.flags, GPUPART_SMLP_NUMBERED);
    EXPECT_EQ(gpupart_smlp_close(made), 0);

    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const uint32_t before_numbers = 0;
    ASSERT_EQ(::pwrite(fd, &before_numbers, sizeof before_numbers, offsetof(gpupart_smlp_component, flags)),
              static_cast<ssize_t>(sizeof before_numbers));
    ::close(fd);
    gpupart_smlp* refused = nullptr;
    EXPECT_EQ(gpupart_smlp_open("numbered", nullptr, &refused), EPROTO);
    EXPECT_EQ(refused, nullptr);
    EXPECT_TRUE(one_line(gpupart_smlp_last_error()));
    EXPECT_NE(std::strstr(gpupart_smlp_last_error(), "before TPC numbers"), nullptr) << gpupart_smlp_last_error();
    EXPECT_EQ(gpupart_smlp_open("numbered", &config, &refused), EPROTO);
}

TEST(SmlpProcesses, RacingCreatorsAllJoinOneFile) {
    TempRegistry registry;
    Pipe start;
    std::vector<pid_t> children;
    for (int i = 0; i < 8; ++i)
        children.push_back(spawn([&] {
            start.receive();
            const gpupart_smlp_config config = config_of(6, 1, 3);
            gpupart_smlp* smlp = nullptr;
            if (gpupart_smlp_open("race", &config, &smlp) != 0) return 1;
            const std::vector<uint32_t> levels{1};
            const gpupart_smlp_request_spec spec = spec_of(levels);
            gpupart_smlp_grant grant{};
            if (gpupart_smlp_lock(smlp, &spec, &grant) != 0 || grant.count != 1) return 2;
            if (gpupart_smlp_unlock(smlp, &grant) != 0) return 3;
            return gpupart_smlp_close(smlp);
        }));
    for (size_t i = 0; i < children.size(); ++i) start.send(1);
    for (pid_t child : children) EXPECT_EQ(wait_child(child), 0);
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(registry.user_dir()))
        names.push_back(entry.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"race.smlp"}) << "no temporary file is left behind";
    const gpupart_smlp_file file = read_component(registry.user_dir() + "/race.smlp");
    EXPECT_EQ(file.header.satisfied, 8u);
    EXPECT_EQ(file.header.finalized, 8u);
}

TEST(SmlpProcesses, TimedLockWithdrawsTheRequest) {
    TempRegistry registry;
    const gpupart_smlp_config config = config_of(4, 1, 2);
    gpupart_smlp* smlp = nullptr;
    ASSERT_EQ(gpupart_smlp_open("timed", &config, &smlp), 0) << gpupart_smlp_last_error();
    const std::vector<uint32_t> all{4, 3, 2, 1};
    gpupart_smlp_request_spec spec = spec_of(all);
    gpupart_smlp_grant grant{};
    ASSERT_EQ(gpupart_smlp_lock(smlp, &spec, &grant), 0);
    const pid_t waiter = spawn([] {
        gpupart_smlp* joined = nullptr;
        if (gpupart_smlp_open("timed", nullptr, &joined) != 0) return 1;
        const std::vector<uint32_t> one{1};
        const gpupart_smlp_request_spec request = spec_of(one);
        gpupart_smlp_grant got{};
        const int error = gpupart_smlp_lock_timed(joined, &request, &got, 100000000u);  // 100 ms
        return error == ETIMEDOUT && one_line(gpupart_smlp_last_error()) ? 0 : 2;
    });
    EXPECT_EQ(wait_child(waiter), 0);
    gpupart_smlp_grant never{};
    EXPECT_EQ(gpupart_smlp_lock_timed(smlp, &spec, &never, 0), ETIMEDOUT);  // 0: only if granted at once
    const gpupart_smlp_file file = read_component(registry.user_dir() + "/timed.smlp");
    EXPECT_EQ(gpupart_smlp_core_count(&file, GPUPART_SMLP_SQ), 1u);
    EXPECT_EQ(gpupart_smlp_core_count(&file, GPUPART_SMLP_FQ) + gpupart_smlp_core_count(&file, GPUPART_SMLP_PQ), 0u);
    EXPECT_EQ(gpupart_smlp_unlock(smlp, &grant), 0);
    gpupart_smlp_close(smlp);
}

// Lemma 13 across processes: each TPC of a grant is claimed in shared memory while held; a second claim
// of any TPC is a violation. Random L lists (Ali et al.'s (ECRTS 2024) step shape), priorities and hold times.
TEST(SmlpProcesses, ProcessesHammeringOneComponentNeverShareATpc) {
    TempRegistry registry;
    constexpr uint32_t kTpcs = 12;
    constexpr uint32_t kH = 2;
    const gpupart_smlp_config config = config_of(kTpcs, kH, 2);
    gpupart_smlp* smlp = nullptr;
    ASSERT_EQ(gpupart_smlp_open("hammer", &config, &smlp), 0) << gpupart_smlp_last_error();
    struct Shared {
        std::atomic<int32_t> owner[128];
        std::atomic<int32_t> violations;
        std::atomic<int64_t> grants;
    };
    void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(memory, MAP_FAILED);
    Shared* shared = new (memory) Shared{};
    constexpr int kProcesses = 6;
    constexpr int kRounds = 150;
    std::vector<pid_t> children;
    for (int id = 1; id <= kProcesses; ++id)
        children.push_back(spawn([&, id] {
            gpupart_smlp* mine = nullptr;
            if (gpupart_smlp_open("hammer", nullptr, &mine) != 0) return 1;
            Random random(static_cast<uint32_t>(id));
            for (int round = 0; round < kRounds; ++round) {
                const std::vector<uint32_t> levels = step_levels(5000, 1 + random() % kTpcs, kH, kTpcs);
                const gpupart_smlp_request_spec spec = spec_of(levels, static_cast<int32_t>(random() % 4));
                gpupart_smlp_grant grant{};
                if (gpupart_smlp_lock(mine, &spec, &grant) != 0) return 2;
                if (grant.count == 0 || grant.count % kH != 0 || (grant.allowed[0] & ~0xfffu) != 0) return 3;
                for (uint32_t bit = 0; bit < kTpcs; ++bit)
                    if ((grant.allowed[0] >> bit) & 1u)
                        if (shared->owner[bit].exchange(id) != 0) shared->violations++;
                shared->grants++;
                for (uint32_t spin = random() % 2000; spin > 0; --spin) std::atomic_signal_fence(std::memory_order_seq_cst);
                if (random() % 4 == 0) ::sched_yield();
                for (uint32_t bit = 0; bit < kTpcs; ++bit)
                    if ((grant.allowed[0] >> bit) & 1u)
                        if (shared->owner[bit].exchange(0) != id) shared->violations++;
                if (gpupart_smlp_unlock(mine, &grant) != 0) return 4;
            }
            return gpupart_smlp_close(mine);
        }));
    for (pid_t child : children) EXPECT_EQ(wait_child(child), 0);
    EXPECT_EQ(shared->violations.load(), 0);
    EXPECT_EQ(shared->grants.load(), kProcesses * kRounds);
    const gpupart_smlp_file file = read_component(registry.user_dir() + "/hammer.smlp");
    EXPECT_EQ(file.header.satisfied, static_cast<uint64_t>(kProcesses * kRounds));
    EXPECT_EQ(file.header.finalized, static_cast<uint64_t>(kProcesses * kRounds));
    EXPECT_EQ(file.header.reclaimed, 0u);
    EXPECT_EQ(gpupart_smlp_core_count(&file, GPUPART_SMLP_FREE), GPUPART_SMLP_MAX_REQUESTS);
    ::munmap(memory, sizeof(Shared));
    gpupart_smlp_close(smlp);
}

// A holder killed with SIGKILL (left a zombie: its parent has not reaped it) while a waiter waits:
// the waiter's periodic sweep finds it gone and takes its TPCs.
TEST(SmlpProcesses, HolderKilledWithSigkillReturnsItsTpcs) {
    TempRegistry registry;
    const gpupart_smlp_config config = config_of(6, 1, 2);
    gpupart_smlp* smlp = nullptr;
    ASSERT_EQ(gpupart_smlp_open("killed", &config, &smlp), 0) << gpupart_smlp_last_error();
    const std::string path = registry.user_dir() + "/killed.smlp";
    Pipe held;
    Pipe granted;
    const pid_t holder = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const std::vector<uint32_t> all{6, 5, 4, 3, 2, 1};
        const gpupart_smlp_request_spec spec = spec_of(all);
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("killed", nullptr, &mine) != 0 || gpupart_smlp_lock(mine, &spec, &grant) != 0) return 1;
        held.send(grant.count);
        for (;;) ::pause();
    });
    ASSERT_EQ(held.receive(), 6);
    const pid_t waiter = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const std::vector<uint32_t> levels{9, 5, 4, 3, 3, 3};  // z = 4 of 6 free
        const gpupart_smlp_request_spec spec = spec_of(levels);
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("killed", nullptr, &mine) != 0) return 1;
        if (gpupart_smlp_lock_timed(mine, &spec, &grant, 30000000000u) != 0) return 2;
        granted.send(grant.count);
        return gpupart_smlp_unlock(mine, &grant);
    });
    ASSERT_TRUE(eventually([&] { return fifo_length(path) == 1; }));
    const auto killed_at = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(holder, SIGKILL), 0);
    EXPECT_EQ(granted.receive(), 4);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    std::printf("waiter granted %.1f ms after the holder was killed (sweep period 20 ms)\n", seconds * 1000);
    EXPECT_LT(seconds, 2.0) << "a bound against a hang, not a timing: the sweep runs every 20 ms";
    EXPECT_EQ(wait_child(waiter), 0);
    EXPECT_EQ(wait_child(holder), 128 + SIGKILL);
    const gpupart_smlp_file file = read_component(path);
    EXPECT_EQ(file.header.reclaimed, 1u);
    EXPECT_EQ(gpupart_smlp_core_count(&file, GPUPART_SMLP_FREE), GPUPART_SMLP_MAX_REQUESTS);

    // Nobody waiting: a dead holder's TPCs are found at the next lock.
    const pid_t quiet = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const std::vector<uint32_t> all{6, 5, 4, 3, 2, 1};
        const gpupart_smlp_request_spec spec = spec_of(all);
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("killed", nullptr, &mine) != 0 || gpupart_smlp_lock(mine, &spec, &grant) != 0) return 1;
        ::raise(SIGKILL);
        return 2;
    });
    EXPECT_EQ(wait_child(quiet), 128 + SIGKILL);
    const std::vector<uint32_t> all{6, 5, 4, 3, 2, 1};
    const gpupart_smlp_request_spec spec = spec_of(all);
    gpupart_smlp_grant grant{};
    ASSERT_EQ(gpupart_smlp_lock_timed(smlp, &spec, &grant, 0), 0) << gpupart_smlp_last_error();
    EXPECT_EQ(grant.count, 6u);
    EXPECT_EQ(gpupart_smlp_unlock(smlp, &grant), 0);
    gpupart_smlp_close(smlp);
}

// A process killed inside the mutex, mid-change (seq odd, its own record freed as finalize begins,
// another record half written): the next locker gets EOWNERDEAD, repairs, and the waiter is granted.
TEST(SmlpProcesses, LockerKilledInsideTheMutexIsRepairedByTheNext) {
    TempRegistry registry;
    const gpupart_smlp_config config = config_of(4, 1, 2);
    gpupart_smlp* smlp = nullptr;
    ASSERT_EQ(gpupart_smlp_open("mutex", &config, &smlp), 0) << gpupart_smlp_last_error();
    const std::string path = registry.user_dir() + "/mutex.smlp";
    Pipe held;
    Pipe die;
    Pipe granted;
    const pid_t holder = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const std::vector<uint32_t> all{4, 3, 2, 1};
        const gpupart_smlp_request_spec spec = spec_of(all);
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("mutex", nullptr, &mine) != 0 || gpupart_smlp_lock(mine, &spec, &grant) != 0) return 1;
        held.send(grant.count);
        die.receive();
        const int fd = ::open(path.c_str(), O_RDWR);
        auto* file = static_cast<gpupart_smlp_file*>(
            ::mmap(nullptr, sizeof(gpupart_smlp_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        if (file == MAP_FAILED || ::pthread_mutex_lock(reinterpret_cast<pthread_mutex_t*>(file->header.lock)) != 0) return 2;
        file->header.seq += 1;  // odd: a change begins
        for (gpupart_smlp_request& record : file->requests)
            if (record.queue == GPUPART_SMLP_SQ && record.pid == ::getpid()) record.queue = GPUPART_SMLP_FREE;
        file->requests[20].pid = 4242;  // an issue half done: queue (written last) still FREE
        file->requests[20].level_count = 1;
        ::raise(SIGKILL);  // dies holding the mutex
        return 3;
    });
    ASSERT_EQ(held.receive(), 4);
    const pid_t waiter = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const std::vector<uint32_t> one{1};
        const gpupart_smlp_request_spec spec = spec_of(one);
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("mutex", nullptr, &mine) != 0) return 1;
        if (gpupart_smlp_lock_timed(mine, &spec, &grant, 30000000000u) != 0) return 2;
        granted.send(grant.count);
        die.receive();
        return gpupart_smlp_unlock(mine, &grant);
    });
    ASSERT_TRUE(eventually([&] { return fifo_length(path) == 1; }));
    die.send(1);
    EXPECT_EQ(granted.receive(), 1);
    EXPECT_EQ(wait_child(holder), 128 + SIGKILL);
    const gpupart_smlp_file repaired = read_component(path);  // seq even again, the file valid
    EXPECT_EQ(repaired.header.seq % 2, 0u);
    EXPECT_EQ(repaired.requests[20].queue, GPUPART_SMLP_FREE);
    EXPECT_EQ(gpupart_smlp_core_count(&repaired, GPUPART_SMLP_SQ), 1u);
    die.send(1);
    EXPECT_EQ(wait_child(waiter), 0);
    const std::vector<uint32_t> all{4, 3, 2, 1};  // the mutex works normally again
    const gpupart_smlp_request_spec spec = spec_of(all);
    gpupart_smlp_grant grant{};
    ASSERT_EQ(gpupart_smlp_lock_timed(smlp, &spec, &grant, 0), 0) << gpupart_smlp_last_error();
    EXPECT_EQ(grant.count, 4u);
    EXPECT_EQ(gpupart_smlp_unlock(smlp, &grant), 0);
    gpupart_smlp_close(smlp);
}

}  // namespace
