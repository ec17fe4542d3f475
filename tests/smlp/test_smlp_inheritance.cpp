// Rule 3 between real processes: a low-priority holder's thread inherits a waiting job's priority as
// SCHED_FIFO when the OS allows it (root: CAP_SYS_NICE), and gets its own policy back at unlock; an
// unprivileged user (uid 65534, RLIMIT_RTPRIO 0) is refused, and the component records that.
#include <cstdio>
#include <cstring>

#include <grp.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "registry_slot.h"
#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

struct Observed {
    int setup = -1;                 // 0 when both processes got going
    int boosted_policy = -1;        // the holder thread's policy while the waiter waits
    int boosted_priority = -1;
    uint32_t inheritance = 99;      // the holder's record then
    int32_t inherited_priority = -1;
    uint64_t applied = 0;
    uint64_t refused = 0;
    int64_t policy_after_unlock = -1;
    int64_t priority_after_unlock = -1;
    int64_t waiter_granted = -1;
};

// Holder (priority 1) takes all 4 TPCs; a waiter of priority 50 arrives; we look at the holder's thread
// until the component says what Rule 3 did, then let the holder unlock.
Observed run_scenario(const std::string& user_dir) {
    Observed seen;
    const gpupart_smlp_config config = config_of(4, 1, 2);
    gpupart_smlp* smlp = nullptr;
    if (gpupart_smlp_open("inherit", &config, &smlp) != 0) {
        std::fprintf(stderr, "open: %s\n", gpupart_smlp_last_error());
        return seen;
    }
    Pipe from_holder;
    Pipe to_holder;
    Pipe from_waiter;
    const pid_t holder = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const uint32_t all[] = {4, 3, 2, 1};
        const gpupart_smlp_request_spec spec{1, all, 4, 0, "holder"};
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("inherit", nullptr, &mine) != 0 || gpupart_smlp_lock(mine, &spec, &grant) != 0) return 1;
        from_holder.send(::gettid());
        to_holder.receive();
        if (gpupart_smlp_unlock(mine, &grant) != 0) return 2;
        sched_param param{};
        from_holder.send(::sched_getscheduler(0));
        ::sched_getparam(0, &param);
        from_holder.send(param.sched_priority);
        return 0;
    });
    const int64_t tid = from_holder.receive();
    const pid_t waiter = spawn([&] {
        gpupart_smlp* mine = nullptr;
        const uint32_t one[] = {1, 1, 1, 1};
        const gpupart_smlp_request_spec spec{50, one, 4, 0, "urgent"};
        gpupart_smlp_grant grant{};
        if (gpupart_smlp_open("inherit", nullptr, &mine) != 0 || gpupart_smlp_lock(mine, &spec, &grant) != 0) return 1;
        from_waiter.send(grant.count);
        return gpupart_smlp_unlock(mine, &grant);
    });
    const std::string path = user_dir + "/inherit.smlp";
    gpupart_smlp_request record{};
    gpupart_smlp_file file{};
    const bool decided = tid > 0 && eventually([&] {
        file = read_component(path);
        for (const gpupart_smlp_request& r : file.requests)
            if (r.queue == GPUPART_SMLP_SQ && r.tid == tid && r.inheritance != GPUPART_SMLP_INHERIT_NONE) {
                record = r;
                return true;
            }
        return false;
    });
    if (decided) {
        seen.setup = 0;
        seen.boosted_policy = ::sched_getscheduler(static_cast<pid_t>(tid));
        sched_param param{};
        ::sched_getparam(static_cast<pid_t>(tid), &param);
        seen.boosted_priority = param.sched_priority;
        seen.inheritance = record.inheritance;
        seen.inherited_priority = record.inherited_priority;
        seen.applied = file.header.inheritance_applied;
        seen.refused = file.header.inheritance_refused;
    }
    to_holder.send(1);
    seen.policy_after_unlock = from_holder.receive();
    seen.priority_after_unlock = from_holder.receive();
    seen.waiter_granted = from_waiter.receive();
    if (wait_child(holder) != 0 || wait_child(waiter) != 0) seen.setup = -2;
    gpupart_smlp_close(smlp);
    return seen;
}

bool can_use_sched_fifo() {
    sched_param param{};
    param.sched_priority = 1;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) return false;
    param.sched_priority = 0;
    ::sched_setscheduler(0, SCHED_OTHER, &param);
    return true;
}

TEST(SmlpInheritance, HolderInheritsTheWaitersPriorityAsRoot) {
    if (::geteuid() != 0 || !can_use_sched_fifo()) GTEST_SKIP() << "needs root with CAP_SYS_NICE";
    TempRegistry registry;
    const Observed seen = run_scenario(registry.user_dir());
    ASSERT_EQ(seen.setup, 0);
    EXPECT_EQ(seen.inheritance, GPUPART_SMLP_INHERIT_APPLIED);
    EXPECT_EQ(seen.inherited_priority, 50);
    EXPECT_EQ(seen.boosted_policy, SCHED_FIFO);
    EXPECT_EQ(seen.boosted_priority, 50);
    EXPECT_GE(seen.applied, 1u);
    EXPECT_EQ(seen.refused, 0u);
    EXPECT_EQ(seen.policy_after_unlock, SCHED_OTHER) << "restored at unlock";
    EXPECT_EQ(seen.priority_after_unlock, 0);
    EXPECT_EQ(seen.waiter_granted, 1);
}

// As uid 65534 with RLIMIT_RTPRIO 0 (Debian's default for users): the kernel refuses SCHED_FIFO.
TEST(SmlpInheritance, RefusedForAnUnprivilegedUserAndRecorded) {
    TempRegistry registry;
    rlimit limit{};
    ::getrlimit(RLIMIT_RTPRIO, &limit);
    if (::geteuid() != 0 && limit.rlim_cur != 0 && limit.rlim_max != 0 && can_use_sched_fifo())
        GTEST_SKIP() << "this user may use SCHED_FIFO and is not root (cannot become another user)";
    const std::string root = registry.root;
    const pid_t user = spawn([root] {
        const rlimit none{0, 0};
        if (::setrlimit(RLIMIT_RTPRIO, &none) != 0) return 10;
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) return 11;
        if (can_use_sched_fifo()) return 12;
        char dir[512];
        if (gpupart_user_dir(root.c_str(), ::geteuid(), 1, dir, sizeof dir) != 0) return 13;
        const Observed seen = run_scenario(dir);
        std::fprintf(stderr, "uid %u: setup %d inheritance %u inherited %d policy %d refused %llu after %lld granted %lld\n",
                     ::geteuid(), seen.setup, seen.inheritance, seen.inherited_priority, seen.boosted_policy,
                     static_cast<unsigned long long>(seen.refused), static_cast<long long>(seen.policy_after_unlock),
                     static_cast<long long>(seen.waiter_granted));
        if (seen.setup != 0) return 14;
        if (seen.inheritance != GPUPART_SMLP_INHERIT_REFUSED || seen.inherited_priority != 50) return 15;
        if (seen.boosted_policy != SCHED_OTHER || seen.refused < 1 || seen.applied != 0) return 16;
        if (seen.policy_after_unlock != SCHED_OTHER || seen.waiter_granted != 1) return 17;
        return 0;
    });
    EXPECT_EQ(wait_child(user), 0);
}

}  // namespace
