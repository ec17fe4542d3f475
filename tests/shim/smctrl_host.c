/*
 * A program that partitions itself through libgpupart.so (the libsmctrl API), for smctrl_end_to_end.sh.
 * It links libgpupart.so and never CUDA: the library loads the driver (the TEST DOUBLE of tests/shim, found
 * through LD_LIBRARY_PATH) at the first API call, and the program reaches the driver's launch and stream
 * functions with dlopen/dlsym, as a CUDA runtime does.
 *
 *   smctrl_host STEP...   in order, one line per step on stdout (flushed). S names a stream: "null" (the
 *   legacy default stream) or 0-7 (made by newstream:S). Masks are hex disable masks, as libsmctrl takes.
 *     global:HEX | global128:HEX      libsmctrl_set_global_mask(_ext)        -> "global ok" | "global error=E MSG"
 *     stream:S:HEX | stream128:S:HEX  libsmctrl_set_stream_mask(_ext)        -> "stream S ok" | ...
 *     next:HEX | next128:HEX          libsmctrl_set_next_mask(_ext)          -> "next ok" | ...
 *     newstream:S / destroy:S         cuStreamCreate / cuStreamDestroy_v2     -> "stream S at 0x..." / "destroyed S"
 *     launch:S | launchex:S           cuLaunchKernel / cuLaunchKernelEx on S  -> "launch S allowed=0-3,9-16"
 *                                     (TPC numbers the kernel's descriptor allows on the test double's H200,
 *                                     k for SMs 2k and 2k+1; "all" when it carries no mask)
 *     gpcs:D | gpcs128:D              libsmctrl_get_gpc_info(_ext)            -> "gpcs D n=N 0x..,0x.." | error
 *     tpcs:D | tpcscuda:D             libsmctrl_get_tpc_info(_cuda)           -> "tpcs D n=N" | error
 *     makemask:L:H | makemask128:L:H  libsmctrl_make_mask(_ext)              -> "makemask 0x..." | error
 *     null:CALL                       CALL (gpcs, gpcs128, tpcs, tpcscuda, makemask) with NULL outputs
 *     lasterror                       gpupart_last_error()                    -> "lasterror <text>" ("none" when empty)
 *     extra:N:HEX                     N more streams, each with stream mask HEX -> "extra N ok" | the first error
 *     launchextra:I / destroyextra:I  a launch on / destroying extra stream I (0-based) -> as launch: / destroy:
 *     whereextra:I                    where extra stream I is                 -> "extra I at 0x..."
 *     device:N, thread:A+B+C, ready:FILE, wait:FILE, pid   as in shim_host.c
 * Exit status: 0 (API errors are printed, they are results), 1 for a bad step or a driver call that failed,
 * 2 when a wait gives up.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_steps.h"

#include <gpupart/libsmctrl.h>

#define DESCRIPTOR_BYTES 512
#define V04_ENABLE_BIT 0x80000000u
#define STREAMS 8

struct launch_config { /* CUlaunchConfig */
    unsigned grid[3], block[3], shared_bytes;
    void* stream;
    void* attrs;
    unsigned attr_count;
};
static struct {
    int (*stream_create)(void** stream, unsigned flags);
    int (*stream_destroy)(void* stream);
    int (*launch)(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void* stream, void**, void**);
    int (*launch_ex)(const struct launch_config* config, void* f, void** params, void** extra);
    int (*last_descriptor)(unsigned char* out);
    int (*set_device)(int ordinal);
    int (*last_sms)(uint32_t sms[8]);
} g_cu;
static void* g_streams[STREAMS];
#define EXTRA_STREAMS 100
static void* g_extra[EXTRA_STREAMS];

#define RESOLVE(library, field, name)                       \
    do {                                                    \
        void* symbol_ = dlsym((library), (name));           \
        if (symbol_ == NULL) return -1;                     \
        memcpy(&g_cu.field, &symbol_, sizeof g_cu.field);   \
    } while (0)

/* The driver's functions, once (the library may have loaded it already: dlopen returns the same one). */
static int driver(void) {
    if (g_cu.launch != NULL) return 0;
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    if (library == NULL) {
        fprintf(stderr, "smctrl_host: %s\n", dlerror());
        return -1;
    }
    RESOLVE(library, stream_create, "cuStreamCreate");
    RESOLVE(library, stream_destroy, "cuStreamDestroy_v2");
    RESOLVE(library, launch_ex, "cuLaunchKernelEx");
    RESOLVE(library, last_descriptor, "fake_cuda_last_descriptor");
    RESOLVE(library, set_device, "fake_cuda_set_device");
    RESOLVE(library, last_sms, "fake_cuda_last_sms");
    RESOLVE(library, launch, "cuLaunchKernel");
    return 0;
}

static int bad(const char* step) {
    fprintf(stderr, "smctrl_host: bad step %s\n", step);
    return 1;
}

static int parse_hex(const char* text, uint128_t* value) {
    if (text[0] != '0' || (text[1] != 'x' && text[1] != 'X') || text[2] == '\0' || strlen(text) > 34) return -1;
    uint128_t v = 0;
    for (const char* p = text + 2; *p != '\0'; ++p) {
        int digit;
        if (*p >= '0' && *p <= '9') digit = *p - '0';
        else if (*p >= 'a' && *p <= 'f') digit = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F') digit = *p - 'A' + 10;
        else return -1;
        v = (v << 4) | (uint128_t)digit;
    }
    *value = v;
    return 0;
}

static void print_hex(uint128_t value) {
    const uint64_t high = (uint64_t)(value >> 64), low = (uint64_t)value;
    if (high != 0) printf("0x%llx%016llx", (unsigned long long)high, (unsigned long long)low);
    else printf("0x%llx", (unsigned long long)low);
}

/* "null" or 0-7: the stream handle; -1 when malformed. */
static int stream_index(const char* text, void** stream) {
    if (strncmp(text, "null", 4) == 0 && (text[4] == '\0' || text[4] == ':')) {
        *stream = NULL;
        return STREAMS;
    }
    if (text[0] < '0' || text[0] >= '0' + STREAMS || (text[1] != '\0' && text[1] != ':')) return -1;
    *stream = g_streams[text[0] - '0'];
    return text[0] - '0';
}

/* "ok", or the errno and message the call left. */
static void result_line(const char* what, int error) {
    const char* message = gpupart_last_error();
    if (error == 0 && message[0] == '\0') printf("%s ok\n", what);
    else if (error == 0) printf("%s error %s\n", what, message); /* a void call: only the message tells */
    else printf("%s error=%d %s\n", what, error, message);
}

/* The TPC numbers the last kernel may run on: the SMs the test double says its descriptor allows (it models
 * the H200), TPC k for SMs 2k and 2k+1, as %smid would tell on a GPU. */
static void print_allowed(const char* prefix) {
    unsigned char descriptor[DESCRIPTOR_BYTES];
    const int called = g_cu.last_descriptor(descriptor);
    uint32_t word0, sms[8];
    memcpy(&word0, descriptor, sizeof word0);
    printf("%s%s allowed=", prefix, called ? "" : " (no callback)");
    if ((word0 & V04_ENABLE_BIT) == 0) {
        printf("all\n");
        return;
    }
    g_cu.last_sms(sms);
    int first = 1;
    for (int tpc = 0; tpc < 128;) {
        if (((sms[(2 * tpc) / 32] >> ((2 * tpc) % 32)) & 1u) == 0) {
            ++tpc;
            continue;
        }
        int end = tpc;
        while (end + 1 < 128 && ((sms[(2 * end + 2) / 32] >> ((2 * end + 2) % 32)) & 1u) != 0) ++end;
        printf(end > tpc ? "%s%d-%d" : "%s%d", first ? "" : ",", tpc, end);
        first = 0;
        tpc = end + 1;
    }
    printf("%s\n", first ? "none" : "");
}

static int mask_step(const char* step) {
    const int wide = strstr(step, "128:") != NULL;
    const char* rest = strchr(step, ':') + 1;
    void* stream = NULL;
    int index = -1;
    if (starts_with(step, "stream")) {
        if ((index = stream_index(rest, &stream)) < 0 || (rest = strchr(rest, ':')) == NULL) return bad(step);
        ++rest;
    }
    uint128_t mask;
    if (parse_hex(rest, &mask) != 0 || (!wide && (mask >> 64) != 0)) return bad(step);
    char what[32];
    if (starts_with(step, "global")) {
        if (wide) libsmctrl_set_global_mask_ext(mask);
        else libsmctrl_set_global_mask((uint64_t)mask);
        snprintf(what, sizeof what, "global");
    } else if (starts_with(step, "next")) {
        if (wide) libsmctrl_set_next_mask_ext(mask);
        else libsmctrl_set_next_mask((uint64_t)mask);
        snprintf(what, sizeof what, "next");
    } else {
        if (wide) libsmctrl_set_stream_mask_ext(stream, mask);
        else libsmctrl_set_stream_mask(stream, (uint64_t)mask);
        if (index == STREAMS) snprintf(what, sizeof what, "stream null");
        else snprintf(what, sizeof what, "stream %d", index);
    }
    result_line(what, 0);
    return 0;
}

static int info_step(const char* step) {
    const int null_outputs = starts_with(step, "null:");
    const char* call = null_outputs ? step + 5 : step;
    const char* argument = strchr(call, ':');
    const int dev = argument != NULL ? atoi(argument + 1) : 0;
    uint32_t count = 0;
    int error;
    char what[48];
    snprintf(what, sizeof what, "%.*s %d", (int)strcspn(call, ":"), call, dev);
    if (starts_with(call, "gpcs128")) {
        uint128_t* masks = NULL;
        error = libsmctrl_get_gpc_info_ext(null_outputs ? NULL : &count, null_outputs ? NULL : &masks, dev);
        if (error == 0) {
            printf("%s n=%u ", what, count);
            for (uint32_t g = 0; g < count; ++g) {
                if (g > 0) printf(",");
                print_hex(masks[g]);
            }
            printf("\n");
            return 0;
        }
    } else if (starts_with(call, "gpcs")) {
        uint64_t* masks = NULL;
        error = libsmctrl_get_gpc_info(null_outputs ? NULL : &count, null_outputs ? NULL : &masks, dev);
        if (error == 0) {
            printf("%s n=%u ", what, count);
            for (uint32_t g = 0; g < count; ++g) printf("%s0x%llx", g > 0 ? "," : "", (unsigned long long)masks[g]);
            printf("\n");
            return 0;
        }
    } else if (starts_with(call, "tpcscuda") || starts_with(call, "tpcs")) {
        uint32_t* out = null_outputs ? NULL : &count;
        error = starts_with(call, "tpcscuda") ? libsmctrl_get_tpc_info_cuda(out, dev) : libsmctrl_get_tpc_info(out, dev);
        if (error == 0) {
            printf("%s n=%u\n", what, count);
            return 0;
        }
    } else if (starts_with(call, "makemask")) {
        const char* high = argument != NULL ? strchr(argument + 1, ':') : NULL;
        if (argument == NULL || high == NULL) return bad(step);
        const uint32_t low = (uint32_t)atoi(argument + 1), high_exclusive = (uint32_t)atoi(high + 1);
        snprintf(what, sizeof what, "%.*s", (int)strcspn(call, ":"), call);
        if (starts_with(call, "makemask128")) {
            uint128_t mask = 0;
            error = libsmctrl_make_mask_ext(null_outputs ? NULL : &mask, low, high_exclusive);
            if (error == 0) {
                printf("%s ", what);
                print_hex(mask);
                printf("\n");
                return 0;
            }
        } else {
            uint64_t mask = 0;
            error = libsmctrl_make_mask(null_outputs ? NULL : &mask, low, high_exclusive);
            if (error == 0) {
                printf("%s 0x%llx\n", what, (unsigned long long)mask);
                return 0;
            }
        }
    } else {
        return bad(step);
    }
    result_line(what, error);
    return 0;
}

static int run_step(const char* step);

static void* thread_steps(void* argument) {
    intptr_t status = 0;
    for (char* save = NULL, *step = strtok_r(argument, "+", &save); step != NULL && status == 0; step = strtok_r(NULL, "+", &save))
        status = run_step(step);
    return (void*)status;
}

/* extra:N:HEX, launchextra:I, destroyextra:I, whereextra:I: more streams than the app block shows (64). */
static int extra_step(const char* step) {
    if (driver() != 0) return 1;
    char* end = NULL;
    const char* number = strchr(step, ':') + 1;
    const long n = strtol(number, &end, 10);
    if (end == number || n < 0 || n > EXTRA_STREAMS) return bad(step);
    if (starts_with(step, "extra:")) {
        uint128_t mask;
        if (*end != ':' || parse_hex(end + 1, &mask) != 0 || (mask >> 64) != 0) return bad(step);
        for (long i = 0; i < n; ++i) {
            if (g_cu.stream_create(&g_extra[i], 0) != 0) return 1;
            libsmctrl_set_stream_mask(g_extra[i], (uint64_t)mask);
            if (gpupart_last_error()[0] != '\0') {
                printf("extra %ld error %s\n", i, gpupart_last_error());
                return 0;
            }
        }
        printf("extra %ld ok\n", n);
    } else if (*end != '\0' || n >= EXTRA_STREAMS || g_extra[n] == NULL) {
        return bad(step);
    } else if (starts_with(step, "destroyextra:")) {
        if (g_cu.stream_destroy(g_extra[n]) != 0) return 1;
        printf("destroyed extra %ld\n", n);
    } else if (starts_with(step, "whereextra:")) {
        printf("extra %ld at %p\n", n, g_extra[n]);
    } else {
        if (g_cu.launch(NULL, 1, 1, 1, 32, 1, 1, 0, g_extra[n], NULL, NULL) != 0) return 1;
        char prefix[40];
        snprintf(prefix, sizeof prefix, "launch extra %ld", n);
        print_allowed(prefix);
    }
    return 0;
}

static int driver_step(const char* step) {
    if (driver() != 0) return 1;
    void* stream = NULL;
    int index;
    if (starts_with(step, "newstream:")) {
        if ((index = stream_index(step + 10, &stream)) < 0 || index == STREAMS) return bad(step);
        if (g_cu.stream_create(&g_streams[index], 0) != 0) return 1;
        printf("stream %d at %p\n", index, g_streams[index]);
    } else if (starts_with(step, "destroy:")) {
        if ((index = stream_index(step + 8, &stream)) < 0 || index == STREAMS) return bad(step);
        const int result = g_cu.stream_destroy(stream);
        if (result != 0) printf("destroy %d failed=%d\n", index, result);
        else printf("destroyed %d\n", index);
    } else if (starts_with(step, "launch:") || starts_with(step, "launchex:")) {
        const int ex = starts_with(step, "launchex:");
        const char* name = step + (ex ? 9 : 7);
        if ((index = stream_index(name, &stream)) < 0) return bad(step);
        const struct launch_config config = {{1, 1, 1}, {32, 1, 1}, 0, stream, NULL, 0};
        const int result = ex ? g_cu.launch_ex(&config, NULL, NULL, NULL)
                              : g_cu.launch(NULL, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
        if (result != 0) {
            printf("launch %s failed=%d\n", name, result);
        } else {
            char prefix[40];
            snprintf(prefix, sizeof prefix, "%s %s", ex ? "launchex" : "launch", name);
            print_allowed(prefix);
        }
    } else if (starts_with(step, "device:")) {
        if (g_cu.set_device(atoi(step + 7)) != 0) return 1;
        printf("device %d\n", atoi(step + 7));
    }
    return 0;
}

static int run_step(const char* step) {
    int status = 0;
    if (starts_with(step, "global") || starts_with(step, "stream") || starts_with(step, "next")) {
        status = mask_step(step);
    } else if (starts_with(step, "gpcs") || starts_with(step, "tpcs") || starts_with(step, "makemask") ||
               starts_with(step, "null:")) {
        status = info_step(step);
    } else if (starts_with(step, "extra:") || starts_with(step, "launchextra:") || starts_with(step, "destroyextra:") ||
               starts_with(step, "whereextra:")) {
        status = extra_step(step);
    } else if (starts_with(step, "newstream:") || starts_with(step, "destroy:") || starts_with(step, "launch") ||
               starts_with(step, "device:")) {
        status = driver_step(step);
    } else if (strcmp(step, "lasterror") == 0) {
        printf("lasterror %s\n", gpupart_last_error()[0] != '\0' ? gpupart_last_error() : "none");
    } else if (starts_with(step, "thread:")) {
        char* steps = strdup(step + 7);
        pthread_t thread;
        void* result = NULL;
        if (steps == NULL || pthread_create(&thread, NULL, thread_steps, steps) != 0) return 1;
        pthread_join(thread, &result);
        free(steps);
        status = (int)(intptr_t)result;
    } else if (starts_with(step, "ready:")) {
        printf("ready\n");
        fflush(stdout);
        const int fd = open(step + 6, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return 1;
        close(fd);
    } else if (starts_with(step, "wait:")) {
        if (wait_for(step + 5) != 0) return 2;
        printf("resumed\n");
    } else if (strcmp(step, "pid") == 0) {
        printf("pid %d\n", (int)getpid());
    } else {
        return bad(step);
    }
    fflush(stdout);
    return status;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const int status = run_step(argv[i]);
        if (status != 0) return status;
    }
    return 0;
}
