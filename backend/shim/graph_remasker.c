/*
 * The re-mask thread (graph_remasker.h). Measured on an H200 (docs/launch-path.md, "Graph re-masks"): a
 * 200-kernel exec toggled inside its own replay costs that replay about 500 us more, because the driver
 * rebuilds the descriptors there; toggled and uploaded beforehand, the replay costs what a steady one
 * does. So the thread does the toggles and the upload as soon as the change is written, and the front end
 * waits (briefly) for it to finish before it says the change is made.
 * It blocks every signal but the fault signals (the application's handlers never run on it), sleeps in a futex wait on the
 * slot's control.seq (one wake per change; a 1 s timeout covers a wake that went to no one), and stops
 * calling the driver at exit before the CUDA runtime tears contexts down.
 */
#define _GNU_SOURCE
#include "graph_remasker.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "graph_nodes.h"
#include "registry_seqlock.h"
#include "shim_graphs.h"

#define BUSY_RETRIES 100         /* a pass gives up after this many 1 ms waits for a busy exec or writer */
#define ODD_POLLS_FAST 50        /* a write in progress: checked every 2 ms this often, then every second */

static struct gpupart_slot_file* g_slot;
static pid_t g_pid; /* the process that started the thread */

int gpupart_graph_remasker_wanted(void) {
    const char* value = getenv(GPUPART_ENV_GRAPH_REMASK);
    if (value == NULL || value[0] == '\0' || strcmp(value, "ahead") == 0) return 1;
    if (strcmp(value, "at-launch") == 0) return 0;
    fprintf(stderr, "gpupart-shim: %s must be 'ahead' or 'at-launch', not what it is: graphs are re-masked ahead\n",
            GPUPART_ENV_GRAPH_REMASK);
    return 1;
}

static void sleep_ns(long ns) {
    struct timespec pause = {ns / 1000000000l, ns % 1000000000l};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
}

/* Waits until control.seq is no longer `seen` (or `timeout_ns` passed). A mapping the kernel cannot reach
 * (a slot truncated under the process: the slot guard swaps in a private copy at the next read) returns
 * at once, so that case sleeps instead of spinning. */
static void wait_for_change(uint32_t* seq, uint32_t seen, long timeout_ns) {
    struct timespec timeout = {timeout_ns / 1000000000l, timeout_ns % 1000000000l};
    if (syscall(SYS_futex, seq, FUTEX_WAIT, seen, &timeout, NULL, 0) != 0 && errno == EFAULT) sleep_ns(timeout_ns);
}

/* Re-masks every exec it can reach; gives up after BUSY_RETRIES busy rounds (the launches do the rest). */
static void pass(struct gpupart_slot_file* slot) {
    for (int busy = 0;;) {
        const int step = gpupart_graphs_remask_ahead(slot);
        if (step == GPUPART_AHEAD_ONE) continue;
        if (step == GPUPART_AHEAD_DONE) return;
        /* Given up: the launches re-mask the rest, and gpupart set, finding this change unsettled, says so. */
        if (++busy == BUSY_RETRIES) return;
        sleep_ns(1000000l);
    }
}

static void* run(void* argument) {
    struct gpupart_slot_file* slot = argument;
    /* Its uploads must never break a stream capture another thread of the application has in progress. */
    gpupart_graph_relax_capture();
    uint32_t handled = 0; /* 0 is never a written seq: the first pass runs at once */
    int odd_polls = 0;
    for (;;) {
        const uint32_t seq = __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE);
        if ((seq & 1u) != 0) { /* a writer is in the middle (or died there): its even store wakes this wait */
            wait_for_change(&slot->control.seq, seq, ++odd_polls < ODD_POLLS_FAST ? 2000000l : 1000000000l);
            continue;
        }
        odd_polls = 0;
        if (seq != handled) {
            pass(slot);
            handled = seq;
            continue; /* a change made during the pass is seen at once */
        }
        wait_for_change(&slot->control.seq, seq, 1000000000l);
    }
    return NULL;
}

static void stop_at_exit(void) {
    /* A forked child inherits this handler but not the thread, and its slot is not the parent's. */
    if (getpid() != g_pid) return;
    gpupart_graphs_stop_ahead();
    gpupart_store64(&g_slot->counters.graph_remasker, 0);
}

int gpupart_graph_remasker_start(struct gpupart_slot_file* slot) {
    /* Every signal blocked but those a fault raises: the slot guard must see a SIGBUS from a slot
     * truncated under the process (a blocked fault signal would kill the whole process instead). */
    sigset_t all, previous;
    sigfillset(&all);
    const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; ++i) sigdelset(&all, faults[i]);
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return -1;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &previous); /* the thread starts with every signal blocked */
    pthread_t thread;
    const int made = pthread_create(&thread, &attributes, run, slot);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attributes);
    if (made != 0) {
        fprintf(stderr, "gpupart-shim: cannot start the graph re-mask thread (%s): CUDA graphs are re-masked at their "
                "first launch after a change\n", strerror(made));
        return -1;
    }
    g_slot = slot;
    g_pid = getpid();
    /* Registered now, after the CUDA runtime's own exit handlers: it runs before them (reverse order). */
    atexit(stop_at_exit);
    pthread_setname_np(thread, "gpupart-graphs");
    gpupart_store64(&slot->counters.graph_remasker, 1);
    return 0;
}
