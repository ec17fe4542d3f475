#define _GNU_SOURCE
#include "slot_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "registry_seqlock.h"
#include "registry_slot.h"

static struct gpupart_slot_file* g_guarded;      /* atomic: the page guarded, NULL before */
static struct sigaction g_previous;             /* the SIGBUS disposition before ours */
static uint32_t g_installed;                    /* atomic: handler installed */
static uint32_t g_lost;                         /* atomic: 0 intact, 1 replacing, 2 replaced */
static uint32_t g_remember_busy;                /* try-lock among threads that remember */
static struct gpupart_control g_adopted;        /* seqlock-published copy of the last adopted control */
static struct gpupart_slot_header g_header;     /* the slot's header, copied when guarded */

void gpupart_slot_guard_remember(const struct gpupart_control* adopted) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&g_remember_busy, &expected, 1u, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return; /* another thread is remembering a control block it read at the same moment */
    gpupart_control_write(&g_adopted, &adopted->current);
    __atomic_store_n(&g_remember_busy, 0u, __ATOMIC_RELEASE);
}

int gpupart_slot_guard_lost(void) { return __atomic_load_n(&g_lost, __ATOMIC_ACQUIRE) != 0; }

static void write_all(const char* text) {
    size_t left = strlen(text);
    while (left > 0) {
        const ssize_t n = write(STDERR_FILENO, text, left);
        if (n <= 0) return;
        text += n;
        left -= (size_t)n;
    }
}

/* Fills the private page that replaces a lost slot: everything async-signal-safe (plain stores). */
static void fill_replacement(struct gpupart_slot_file* page) {
    memcpy(&page->header, &g_header, sizeof page->header);
    struct gpupart_control last;
    memset(&last, 0, sizeof last);
    /* A thread may be remembering right now; it finishes without us, so a few tries are enough. If none
     * succeeds, the page gets no control block and threads keep the masks they hold. */
    if (gpupart_control_read(&g_adopted, &last, 64) == 0) {
        gpupart_control_write(&page->control, &last.current);
    } else {
        __atomic_store_n(&page->control.seq, 1u, __ATOMIC_RELEASE); /* odd: "write in progress", keep yours */
    }
    __atomic_store_n(&page->header.state, (uint32_t)GPUPART_SLOT_LIVE, __ATOMIC_RELEASE);
}

static void on_sigbus(int signal_number, siginfo_t* info, void* context) {
    char* page = (char*)__atomic_load_n(&g_guarded, __ATOMIC_ACQUIRE);
    char* address = (char*)info->si_addr;
    if (page != NULL && address >= page && address < page + GPUPART_SLOT_FILE_SIZE) {
        uint32_t expected = 0;
        if (__atomic_compare_exchange_n(&g_lost, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            void* fresh = mmap(page, GPUPART_SLOT_FILE_SIZE, PROT_READ | PROT_WRITE,
                               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (fresh != MAP_FAILED) fill_replacement((struct gpupart_slot_file*)page);
            __atomic_store_n(&g_lost, 2u, __ATOMIC_RELEASE);
            write_all("gpupart-shim: this process's registry slot was truncated by someone: it keeps its last TPC mask, "
                      "which can no longer be changed or seen\n");
        }
        /* Another thread is replacing the page (g_lost 1) or did (2): the access is retried on return. */
        return;
    }
    /* Not ours: what would have happened without the shim. */
    if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != NULL) {
        g_previous.sa_sigaction(signal_number, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != NULL) {
        g_previous.sa_handler(signal_number);
        return;
    }
    /* Default (or ignored, which a fault cannot be): restore it; the faulting access runs again and the
     * kernel applies the default action, a core dump, as without the shim. */
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &fallback, NULL);
}

int gpupart_slot_guard(struct gpupart_slot_file* slot) {
    memcpy(&g_header, &slot->header, sizeof g_header);
    struct gpupart_control initial;
    if (gpupart_control_read(&slot->control, &initial, 64) == 0) gpupart_slot_guard_remember(&initial);
    uint32_t expected = 0;
    if (__atomic_compare_exchange_n(&g_installed, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_sigbus;
        action.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGBUS, &action, &g_previous) != 0) {
            __atomic_store_n(&g_installed, 0u, __ATOMIC_RELEASE);
            return -errno;
        }
    }
    __atomic_store_n(&g_guarded, slot, __ATOMIC_RELEASE);
    return 0;
}
