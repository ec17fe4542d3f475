/*
 * Several processes of one SMLP component (gpupart/smlp.h) take turns on a GPU's TPCs: each worker is a
 * "kernel" with its own parallelism profile L (the lengths seed 004's section 6 generates: a kernel that
 * stops gaining past rho TPCs) and priority, locks, prints what it was granted, "runs" for the length
 * its grant gives it, and unlocks. Grants of different workers never overlap; a request that cannot use
 * more TPCs is not given more.
 *
 *   smlp_workers [workers (4)] [rounds (4)] [component TPCs (12)] [h (2)] [M (2)]
 *
 * On a GPU, a worker would launch its kernel between lock and unlock on exactly its grant:
 *     libsmctrl_set_next_mask_ext(grant.disable_mask);   // gpupart/libsmctrl.h (libgpupart.so)
 *     my_kernel<<<blocks, threads, 0, stream>>>(...); cudaStreamSynchronize(stream);
 * Here the kernel is a sleep of its length, so the program runs anywhere (no GPU needed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpupart/smlp.h>

#define COMPONENT "smlp_workers"

static unsigned argument(int argc, char** argv, int index, unsigned fallback) {
    return argc > index ? (unsigned)strtoul(argv[index], NULL, 10) : fallback;
}

static double now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

/* L for j = h, 2h, ..., H TPCs, in microseconds: longest/rho * max(ceil((rho - j + 1)/j), 1). */
static unsigned make_levels(uint32_t* levels, unsigned tpcs, unsigned h, unsigned rho, unsigned longest) {
    unsigned count = 0;
    for (unsigned j = h; j <= tpcs; j += h) {
        const unsigned steps = rho / j > 0 ? rho / j : 1; /* ceil((rho-j+1)/j) = floor(rho/j) */
        levels[count++] = longest / rho * steps;
    }
    return count;
}

static int worker(unsigned id, unsigned rounds, unsigned tpcs, unsigned h) {
    struct gpupart_smlp* smlp = NULL;
    if (gpupart_smlp_open(COMPONENT, NULL, &smlp) != 0) {
        fprintf(stderr, "worker %u: %s\n", id, gpupart_smlp_last_error());
        return 1;
    }
    uint32_t levels[128];
    const unsigned rho = 3 + 5 * id; /* each worker's kernel stops gaining at another width */
    const unsigned count = make_levels(levels, tpcs, h, rho, 40000);
    char label[32];
    snprintf(label, sizeof label, "worker-%u", id);
    const struct gpupart_smlp_request_spec spec = {(int32_t)(1 + id), levels, count, 0, label};
    for (unsigned round = 0; round < rounds; ++round) {
        struct gpupart_smlp_grant grant;
        const double asked = now_ms();
        if (gpupart_smlp_lock(smlp, &spec, &grant) != 0) {
            fprintf(stderr, "worker %u: %s\n", id, gpupart_smlp_last_error());
            return 2;
        }
        const unsigned length_us = levels[grant.count / h - 1];
        char line[200];
        const int n = snprintf(line, sizeof line,
                               "worker %u (pid %d, rho %2u, priority %u) round %u: %2u TPCs 0x%08x%08x%08x%08x, "
                               "waited %6.1f ms, runs %5u us\n",
                               id, (int)getpid(), rho, 1 + id, round, grant.count, grant.allowed[3], grant.allowed[2],
                               grant.allowed[1], grant.allowed[0], now_ms() - asked, length_us);
        if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0) return 3; /* one write: lines do not mix */
        usleep(length_us); /* the kernel */
        if (gpupart_smlp_unlock(smlp, &grant) != 0) {
            fprintf(stderr, "worker %u: %s\n", id, gpupart_smlp_last_error());
            return 4;
        }
    }
    return gpupart_smlp_close(smlp) == 0 ? 0 : 5;
}

int main(int argc, char** argv) {
    const unsigned workers = argument(argc, argv, 1, 4);
    const unsigned rounds = argument(argc, argv, 2, 4);
    const unsigned tpcs = argument(argc, argv, 3, 12);
    const unsigned h = argument(argc, argv, 4, 2);
    const unsigned fq_length = argument(argc, argv, 5, 2);
    if (workers == 0 || workers > 32 || tpcs == 0 || tpcs > 128 || h == 0) {
        fprintf(stderr, "usage: %s [workers 1-32] [rounds] [TPCs 1-128] [h] [M]\n", argv[0]);
        return 2;
    }
    struct gpupart_smlp_config config;
    memset(&config, 0, sizeof config);
    for (unsigned bit = 0; bit < tpcs; ++bit) config.tpcs[bit / 32] |= 1u << (bit % 32);
    config.h = h;
    config.fq_length = fq_length;
    struct gpupart_smlp* smlp = NULL; /* made (or joined) here; the workers join it */
    if (gpupart_smlp_open(COMPONENT, &config, &smlp) != 0) {
        fprintf(stderr, "%s\n", gpupart_smlp_last_error());
        return 1;
    }
    printf("component %s: %u TPCs, h = %u, M = %u; %u workers x %u rounds\n", COMPONENT, tpcs, h, fq_length, workers,
           rounds);
    fflush(stdout);
    pid_t children[32];
    for (unsigned id = 0; id < workers; ++id) {
        children[id] = fork();
        if (children[id] == 0) _exit(worker(id, rounds, tpcs, h));
        if (children[id] < 0) {
            perror("fork");
            return 1;
        }
    }
    int failed = 0;
    for (unsigned id = 0; id < workers; ++id) {
        int status = 0;
        while (waitpid(children[id], &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    gpupart_smlp_close(smlp);
    return failed;
}
