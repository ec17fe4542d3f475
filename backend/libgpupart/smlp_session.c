/*
 * One locked change of an SMLP component (smlp_session.h).
 *
 * Rule 3 and what Linux allows. The locker that finishes a change computes the Rule 3 target (the
 * earliest-satisfied SQ record whose job's priority is below the highest waiting priority) and calls
 * sched_setscheduler(holder tid, SCHED_FIFO, clamp(priority, 1, 99)) on the holder's thread, which is
 * usually in another process. The kernel (__sched_setscheduler, user_check_sched_setscheduler) allows
 * that only when
 *   - the caller has CAP_SYS_NICE (root, unless a container dropped it), or
 *   - the caller's effective uid is the target's real or effective uid (the same user: components are
 *     per user, so this holds) AND the *target* thread's RLIMIT_RTPRIO (`ulimit -r` of the holder's
 *     process) is nonzero and at least the priority (Debian's default limit is 0: refused), AND the target
 *     has no SCHED_RESET_ON_FORK flag that the call would clear (kept here);
 * and, with RT group scheduling in cgroup v1/v2 kernels that have it, only when the target's cgroup has
 * real-time runtime (else EPERM even for root). Anything refused is recorded in the record
 * (INHERIT_REFUSED, with the priority it should have had) and counted in inheritance_refused; the protocol
 * goes on without the boost. Lowering a thread back to its saved policy is always allowed to the same
 * user, so the restore at unlock (or when the target moves to another record) never needs privileges.
 * Real-time throttling (sched_rt_runtime_us, 95% by default) still bounds a boosted thread.
 */
#define _GNU_SOURCE
#include "smlp_session.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "process_start_time.h"
#include "registry_seqlock.h"
#include "smlp_core.h"

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(((struct gpupart_smlp_component*)0)->lock), "the mutex fits");

static __thread char t_message[256];

const char* smlp_message(void);
const char* smlp_message(void) { return t_message; }

int smlp_fail(int error, const char* format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(t_message, sizeof t_message, format, arguments);
    va_end(arguments);
    return error;
}

static uint64_t clock_ns(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t smlp_realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }
uint64_t smlp_monotonic_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static pthread_mutex_t* mutex_of(struct gpupart_smlp* smlp) { return (pthread_mutex_t*)(void*)smlp->file->header.lock; }

int smlp_mutex_init(void* memory) {
    pthread_mutexattr_t attributes;
    int error = pthread_mutexattr_init(&attributes);
    if (error != 0) return error;
    if (error == 0) error = pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
    if (error == 0) error = pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
    if (error == 0) error = pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
    if (error == 0) error = pthread_mutex_init((pthread_mutex_t*)memory, &attributes);
    pthread_mutexattr_destroy(&attributes);
    return error;
}

void smlp_change_write(struct smlp_change* change) {
    if (change->writing) return;
    change->odd = gpupart_seq_write_begin(&change->smlp->file->header.seq);
    change->writing = 1;
}

void smlp_change_sweep(struct smlp_change* change) {
    struct gpupart_smlp* smlp = change->smlp;
    struct gpupart_smlp_file* file = smlp->file;
    /* Without a working /proc every other process would look dead: sweep only when this one is seen. */
    if (gpupart_process_running(smlp->pid, smlp->start_time) != 1) return;
    uint64_t dead = 0;
    uint64_t alive = 0;
    for (unsigned i = 0; i < GPUPART_SMLP_MAX_REQUESTS; ++i) {
        const struct gpupart_smlp_request* record = &file->requests[i];
        if (__atomic_load_n(&record->queue, __ATOMIC_ACQUIRE) == GPUPART_SMLP_FREE) continue;
        if (record->pid == smlp->pid && record->start_time == smlp->start_time) continue;
        int known = -1; /* the answer for an earlier record of the same process */
        for (unsigned j = 0; j < i && known < 0; ++j)
            if ((((dead | alive) >> j) & 1u) && file->requests[j].pid == record->pid &&
                file->requests[j].start_time == record->start_time)
                known = (int)((alive >> j) & 1u);
        const int running = known >= 0 ? known : gpupart_process_running(record->pid, record->start_time);
        if (running == 0) dead |= 1ull << i;
        else alive |= 1ull << i; /* running, or /proc could not tell: never taken for dead */
    }
    if (dead == 0) return;
    smlp_change_write(change);
    gpupart_smlp_core_drop(file, dead, smlp_realtime_ns());
}

int smlp_change_begin(struct gpupart_smlp* smlp, struct smlp_change* change) {
    change->smlp = smlp;
    change->writing = 0;
    change->odd = 0;
    char why[200];
    int error = pthread_mutex_lock(mutex_of(smlp));
    const int owner_died = error == EOWNERDEAD;
    if (error != 0 && !owner_died) {
        if (error == ENOTRECOVERABLE)
            return smlp_fail(error, "%s: its mutex is unusable (a process unlocked it inconsistent); remove the file "
                                    "when no process uses it", smlp->path);
        return smlp_fail(error, "%s: cannot take its mutex (error %d)", smlp->path, error);
    }
    /* seq odd without EOWNERDEAD: a locker died mid-change and its successor did not repair (a mutex
     * reinitialised by hand, a file copied): the same repair. */
    if (owner_died || (__atomic_load_n(&smlp->file->header.seq, __ATOMIC_RELAXED) & 1u) != 0) {
        smlp_change_write(change);
        if (gpupart_smlp_core_validate_header(smlp->file, why, sizeof why) == 0) {
            smlp_change_sweep(change);
            gpupart_smlp_core_repair(smlp->file, smlp_realtime_ns());
        }
        if (owner_died) pthread_mutex_consistent(mutex_of(smlp));
    }
    error = gpupart_smlp_core_validate(smlp->file, why, sizeof why);
    if (error != 0) {
        if (change->writing) gpupart_seq_write_end(&smlp->file->header.seq, change->odd);
        pthread_mutex_unlock(mutex_of(smlp));
        return smlp_fail(-error, "%s: %s", smlp->path, why);
    }
    return 0;
}

/* Whether `tid` is still a thread of `pid`: a thread id reused by another process is never touched. */
static int thread_exists(int32_t pid, int32_t tid) {
    char path[64];
    struct stat info;
    snprintf(path, sizeof path, "/proc/%d/task/%d", pid, tid);
    return pid > 0 && tid > 0 && stat(path, &info) == 0;
}

void smlp_change_restore(struct smlp_change* change, struct gpupart_smlp_request* record) {
    if (record->inheritance == GPUPART_SMLP_INHERIT_NONE) return;
    smlp_change_write(change);
    if (record->inheritance == GPUPART_SMLP_INHERIT_APPLIED && thread_exists(record->pid, record->tid)) {
        struct sched_param param = {.sched_priority = record->saved_priority};
        sched_setscheduler(record->tid, record->saved_policy, &param); /* lowering: allowed to the same user */
    }
    record->inheritance = GPUPART_SMLP_INHERIT_NONE;
    record->inherited_priority = 0;
}

/* Rule 3 for one record: its holder thread to SCHED_FIFO at `priority`, or REFUSED (see the top). */
static void inherit(struct smlp_change* change, struct gpupart_smlp_request* record, int32_t priority) {
    struct gpupart_smlp_component* header = &change->smlp->file->header;
    smlp_change_write(change);
    if (record->inheritance != GPUPART_SMLP_INHERIT_APPLIED) {
        struct sched_param current = {.sched_priority = 0};
        const int policy = thread_exists(record->pid, record->tid) ? sched_getscheduler(record->tid) : -1;
        if (policy < 0 || sched_getparam(record->tid, &current) != 0) {
            record->inheritance = GPUPART_SMLP_INHERIT_REFUSED; /* the holder thread is gone */
            record->inherited_priority = priority;
            header->inheritance_refused++;
            return;
        }
        record->saved_policy = policy;
        record->saved_priority = current.sched_priority;
    }
    const int saved = record->saved_policy & ~SCHED_RESET_ON_FORK;
    int applied = (saved == SCHED_FIFO || saved == SCHED_RR) && record->saved_priority >= priority; /* already */
    if (!applied) {
        struct sched_param param = {.sched_priority = priority};
        applied = sched_setscheduler(record->tid, SCHED_FIFO | (record->saved_policy & SCHED_RESET_ON_FORK), &param) == 0;
    }
    record->inheritance = applied ? GPUPART_SMLP_INHERIT_APPLIED : GPUPART_SMLP_INHERIT_REFUSED;
    record->inherited_priority = priority;
    if (applied) header->inheritance_applied++;
    else header->inheritance_refused++;
}

static void apply_rule3(struct smlp_change* change) {
    struct gpupart_smlp_file* file = change->smlp->file;
    int32_t wanted = 0;
    const int target = gpupart_smlp_core_rule3_target(file, &wanted);
    const int32_t priority = wanted < 1 ? 1 : wanted > 99 ? 99 : wanted;
    for (int i = 0; i < (int)GPUPART_SMLP_MAX_REQUESTS; ++i) {
        struct gpupart_smlp_request* record = &file->requests[i];
        if (i != target && __atomic_load_n(&record->queue, __ATOMIC_ACQUIRE) == GPUPART_SMLP_SQ)
            smlp_change_restore(change, record); /* only one job inherits (Rule 3) */
    }
    if (target < 0) return;
    struct gpupart_smlp_request* record = &file->requests[target];
    if (record->inheritance == GPUPART_SMLP_INHERIT_NONE || record->inherited_priority < priority)
        inherit(change, record, priority);
}

uint32_t smlp_change_end(struct smlp_change* change) {
    struct gpupart_smlp* smlp = change->smlp;
    uint32_t* wake = &smlp->file->header.wake;
    apply_rule3(change);
    const int changed = change->writing;
    if (changed) {
        gpupart_seq_write_end(&smlp->file->header.seq, change->odd);
        __atomic_add_fetch(wake, 1u, __ATOMIC_SEQ_CST);
    }
    const uint32_t seen = __atomic_load_n(wake, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(mutex_of(smlp));
    /* Woken after the unlock, so the waiters do not queue on the mutex we still hold. */
    if (changed) syscall(SYS_futex, wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    change->writing = 0;
    return seen;
}

int smlp_wait(struct gpupart_smlp* smlp, uint32_t seen, uint64_t timeout_ns) {
    struct timespec timeout = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    const long result = syscall(SYS_futex, &smlp->file->header.wake, FUTEX_WAIT, seen, &timeout, NULL, 0);
    return result != 0 && errno == ETIMEDOUT;
}
