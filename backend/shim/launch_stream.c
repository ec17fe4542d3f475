/* Which stream a kernel launch is on, from the launch functions' driver-API callbacks (launch_stream.h). */
#define _GNU_SOURCE
#include "launch_stream.h"

#include <stdio.h>
#include <string.h>

#include "app_mask_state.h"

/* Callback ids of the driver-API domain: the numbers of CUPTI's public cupti_driver_cbid.h. */
enum {
    CB_STREAM_DESTROY = 127, CB_LAUNCH_KERNEL = 307, CB_STREAM_DESTROY_V2 = 326, CB_LAUNCH_KERNEL_PTSZ = 442,
    CB_LAUNCH_COOPERATIVE = 477, CB_LAUNCH_COOPERATIVE_PTSZ = 478, CB_LAUNCH_KERNEL_EX = 652,
    CB_LAUNCH_KERNEL_EX_PTSZ = 653,
};
static const int kCallbacks[] = {CB_STREAM_DESTROY, CB_LAUNCH_KERNEL, CB_STREAM_DESTROY_V2, CB_LAUNCH_KERNEL_PTSZ,
                                 CB_LAUNCH_COOPERATIVE, CB_LAUNCH_COOPERATIVE_PTSZ, CB_LAUNCH_KERNEL_EX,
                                 CB_LAUNCH_KERNEL_EX_PTSZ};

/* The driver's callback record as measured on driver 580 (gpupart_shim_graphs.c): u32 size at 0, function
 * name at 48, parameter struct at 56, u32 site (0 enter, 1 exit) at 84. The parameter structs are CUDA's
 * generated_cuda_meta.h: cuLaunchKernel(_ptsz)_params and cuLaunchCooperativeKernel(_ptsz)_params hold
 * hStream at 40 (after f and seven unsigned ints); cuLaunchKernelEx(_ptsz)_params starts with a
 * const CUlaunchConfig*, whose hStream is at 32 (after six dimensions and sharedMemBytes, padded);
 * cuStreamDestroy(_v2)_params is the stream alone. */
#define RECORD_MIN_SIZE 0x68u
#define RECORD_NAME 48
#define RECORD_PARAMS 56
#define RECORD_SITE 84
#define SITE_ENTER 0u
#define LAUNCH_PARAMS_STREAM 40
#define LAUNCH_CONFIG_STREAM 32

enum { NOT_YET = 0, FOLLOWED = 1, REFUSED = 2, LAYOUT_UNKNOWN = 3, STARTING = 4 };
static uint32_t g_state;        /* atomic */
static uint32_t g_handle;       /* the shim's subscription, for enabling the callbacks at the API's first call */
static gpupart_enable_fn g_enable;
static uint32_t g_layout_checked;

struct launch_call {
    uint64_t stream;
    uint8_t active;
};
static __thread struct launch_call t_call __attribute__((tls_model("initial-exec")));

void gpupart_launch_stream_setup(uint32_t handle, gpupart_enable_fn enable) {
    g_handle = handle;
    __atomic_store_n(&g_enable, enable, __ATOMIC_RELEASE);
}

void gpupart_launch_stream_start(void) {
    gpupart_enable_fn enable = __atomic_load_n(&g_enable, __ATOMIC_ACQUIRE);
    uint32_t expected = NOT_YET;
    if (enable == NULL || !__atomic_compare_exchange_n(&g_state, &expected, (uint32_t)STARTING, 0, __ATOMIC_ACQ_REL,
                                                       __ATOMIC_ACQUIRE))
        return;
    for (size_t i = 0; i < sizeof kCallbacks / sizeof kCallbacks[0]; ++i)
        if (enable(1, g_handle, GPUPART_DOMAIN_DRIVER_API, kCallbacks[i]) != 0) {
            fprintf(stderr, "gpupart-shim: CUDA refused the launch-call callback %d: the program's stream masks cannot "
                    "be applied\n", kCallbacks[i]);
            for (size_t k = 0; k < i; ++k) enable(0, g_handle, GPUPART_DOMAIN_DRIVER_API, kCallbacks[k]);
            __atomic_store_n(&g_state, (uint32_t)REFUSED, __ATOMIC_RELEASE);
            return;
        }
    __atomic_store_n(&g_state, (uint32_t)FOLLOWED, __ATOMIC_RELEASE);
}

static int handled(int cbid) {
    for (size_t i = 0; i < sizeof kCallbacks / sizeof kCallbacks[0]; ++i)
        if (kCallbacks[i] == cbid) return 1;
    return 0;
}

/* The first record is checked whole (its name says it is a launch or stream call); later ones by size. */
static int record_usable(const unsigned char* record) {
    uint32_t size;
    memcpy(&size, record, sizeof size);
    if (size < RECORD_MIN_SIZE) return 0;
    if (__atomic_load_n(&g_layout_checked, __ATOMIC_RELAXED)) return 1;
    const char* name;
    memcpy(&name, record + RECORD_NAME, sizeof name);
    if (name == NULL || (strncmp(name, "cuLaunch", 8) != 0 && strncmp(name, "cuStreamDestroy", 15) != 0)) return 0;
    __atomic_store_n(&g_layout_checked, 1u, __ATOMIC_RELAXED);
    return 1;
}

int gpupart_launch_stream_on_api(int cbid, const void* record_pointer) {
    if (!handled(cbid)) return 0;
    if (__atomic_load_n(&g_state, __ATOMIC_RELAXED) != FOLLOWED || record_pointer == NULL) return 1;
    const unsigned char* record = record_pointer;
    if (!record_usable(record)) {
        __atomic_store_n(&g_state, (uint32_t)LAYOUT_UNKNOWN, __ATOMIC_RELEASE);
        t_call.active = 0;
        gpupart_app_republish(); /* once per process, on this failure only: the app block says so */
        return 1;
    }
    uint32_t site;
    const unsigned char* params;
    memcpy(&site, record + RECORD_SITE, sizeof site);
    memcpy(&params, record + RECORD_PARAMS, sizeof params);
    if (site != SITE_ENTER) {
        t_call.active = 0; /* the launch call returns: descriptors built after it are not its */
        return 1;
    }
    uint64_t stream = 0;
    if (params != NULL && (cbid == CB_LAUNCH_KERNEL_EX || cbid == CB_LAUNCH_KERNEL_EX_PTSZ)) {
        const unsigned char* config;
        memcpy(&config, params, sizeof config);
        if (config != NULL) memcpy(&stream, config + LAUNCH_CONFIG_STREAM, sizeof stream);
    } else if (params != NULL && (cbid == CB_STREAM_DESTROY || cbid == CB_STREAM_DESTROY_V2)) {
        memcpy(&stream, params, sizeof stream);
        /* At the enter site: once the driver frees the stream, another thread may get a new one at its address. */
        gpupart_app_forget_stream(stream);
        return 1;
    } else if (params != NULL) {
        memcpy(&stream, params + LAUNCH_PARAMS_STREAM, sizeof stream);
    }
    t_call.stream = stream;
    t_call.active = 1;
    return 1;
}

int gpupart_launch_stream_current(uint64_t* stream) {
    if (!t_call.active) return 0;
    *stream = t_call.stream;
    return 1;
}

int gpupart_launch_streams_followed(void) { return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == FOLLOWED; }
