/*
 * TEST DOUBLE of the CUDA driver library (libcuda.so.1), for CI machines that have no GPU and no CUDA.
 * It is never installed and never used outside tests/shim: it lets shim_end_to_end.sh load the REAL
 * libgpupart-shim.so into a real process and drive the shim's launch callback exactly as the driver
 * does (the real driver is exercised separately by tests/device on a GPU machine).
 *
 * It implements only what the shim uses (backend/shim/gpupart_shim.c):
 *  - cuGetExportTable with the tools-callback table id: a table whose entry 3 subscribes a callback and
 *    whose entry 6 enables one (domain, cbid);
 *  - fake_cuda_launch, the test's stand-in for a kernel launch: it builds a 512-byte launch descriptor
 *    filled with FAKE_CUDA_FILL, with the version byte at offset 72, and hands it to the subscribed
 *    callback as "launch descriptor about to be uploaded" (domain 0xb, cbid 1) with the parameter block
 *    the shim reads: first u32 = its size, pointer-sized element 4 = the descriptor.
 * The graph calls the shim follows (driver-API domain) are modelled in fake_graphs.c, streams and the
 * launch functions (cuLaunchKernel, cuLaunchKernelEx, cuStreamDestroy_v2) in fake_launch.c; entry 6
 * remembers which of their callbacks the shim enabled.
 *
 * Devices, for multi-GPU tests: $FAKE_CUDA_GPUS lists the machine's GPUs by UUID, comma-separated
 * ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx,..."; default one GPU, FAKE_CUDA_DEFAULT_UUID). As the real
 * driver does, $CUDA_VISIBLE_DEVICES (indexes, UUIDs or unique UUID prefixes, comma-separated) picks and orders the ones
 * the process sees, and ordinals count those. Each thread's current device starts at ordinal 0 and is
 * changed by fake_cuda_set_device (the test's cudaSetDevice). cuCtxGetDevice and cuDeviceGetUuid_v2
 * answer from that; $FAKE_CUDA_CTX_FAIL=1 makes cuCtxGetDevice fail (a driver that cannot say).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fake_libcuda.h"

#define EXPORT __attribute__((visibility("default")))

/* Bit 31 of the descriptor's first u32 must start clear so the test can see the shim set it. */
#define FAKE_CUDA_FILL 0x5a
#define DOMAIN_LAUNCH 0xb
#define CBID_DESCRIPTOR_UPLOAD 1
#define FAKE_CUDA_HANDLE 0x6a7ea5u

static const unsigned char kCallbackTableId[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
                                                   0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};

typedef void (*launch_callback)(void* user, int domain, int cbid, const void* params);

static launch_callback g_callback;
static void* g_user;
static int g_subscribed;
static int g_launch_enabled;
static unsigned char g_api_enabled[1024]; /* driver-API domain, by cbid (CUPTI's numbers reach about 800) */

static int fake_subscribe(uint32_t* handle, launch_callback callback, void* user) {
    if (handle == NULL || callback == NULL) return 1;
    if (g_subscribed) return 1; /* like the driver: one subscriber */
    g_callback = callback;
    g_user = user;
    g_subscribed = 1;
    *handle = FAKE_CUDA_HANDLE;
    return 0;
}

static int fake_enable(uint32_t on, uint32_t handle, int domain, int cbid) {
    if (!g_subscribed || handle != FAKE_CUDA_HANDLE) return 1;
    if (domain == DOMAIN_LAUNCH && cbid == CBID_DESCRIPTOR_UPLOAD) g_launch_enabled = on != 0;
    if (domain == FAKE_CUDA_DOMAIN_DRIVER_API) {
        if (cbid < 0 || (size_t)cbid >= sizeof g_api_enabled) return 1;
        g_api_enabled[cbid] = on != 0;
    }
    return 0;
}

static int fake_unused(void) { return 1; }

/* ISO C has no conversion between function and object pointers; POSIX tables hold them as void*. */
#define TABLE_ENTRY(entry, function)                                                  \
    do {                                                                              \
        _Static_assert(sizeof(function) == sizeof(void*), "function pointers fit"); \
        const void* object_;                                                          \
        memcpy(&object_, &(function), sizeof object_);                                \
        (entry) = object_;                                                            \
    } while (0)

static const void* g_table[8];

EXPORT int cuGetExportTable(const void** table, const void* id) {
    if (table == NULL || id == NULL || memcmp(id, kCallbackTableId, sizeof kCallbackTableId) != 0) return 1;
    int (*const unused)(void) = fake_unused;
    int (*const subscribe)(uint32_t*, launch_callback, void*) = fake_subscribe;
    int (*const enable)(uint32_t, uint32_t, int, int) = fake_enable;
    for (int i = 0; i < 8; ++i) TABLE_ENTRY(g_table[i], unused);
    TABLE_ENTRY(g_table[3], subscribe);
    TABLE_ENTRY(g_table[6], enable);
    *table = g_table;
    return 0;
}

int fake_cuda_api_callback(int cbid, const void* record) {
    if (!g_subscribed || cbid < 0 || (size_t)cbid >= sizeof g_api_enabled || !g_api_enabled[cbid]) return 0;
    g_callback(g_user, FAKE_CUDA_DOMAIN_DRIVER_API, cbid, record);
    return 1;
}

int fake_cuda_api_record(int cbid, const char* name, void* params, int* result, uint32_t site) {
    _Alignas(8) unsigned char record[0x68];
    memset(record, 0, sizeof record);
    const uint32_t size = sizeof record;
    memcpy(record, &size, sizeof size);
    memcpy(record + 40, &result, sizeof result);
    memcpy(record + 48, &name, sizeof name);
    memcpy(record + 56, &params, sizeof params);
    memcpy(record + 84, &site, sizeof site);
    return fake_cuda_api_callback(cbid, record);
}

int fake_cuda_build_descriptor(unsigned version, unsigned char* descriptor) {
    return fake_cuda_build_descriptor_on(version, descriptor, NULL);
}

int fake_cuda_build_descriptor_on(unsigned version, unsigned char* descriptor, const uint32_t* stream_field) {
    memset(descriptor, FAKE_CUDA_FILL, FAKE_CUDA_DESCRIPTOR_BYTES);
    descriptor[FAKE_CUDA_VERSION_OFFSET] = (unsigned char)version;
    if (stream_field != NULL && __atomic_load_n(&stream_field[0], __ATOMIC_ACQUIRE) != 0 && version == 0x40)
        fake_cuda_stream_mask_to_descriptor(descriptor, stream_field);
    if (!g_subscribed || !g_launch_enabled) return 0;
    void* params[8];
    memset(params, 0, sizeof params);
    const uint32_t size = (uint32_t)sizeof params; /* >= 5 * sizeof(void*): the shim checks it */
    memcpy(params, &size, sizeof size);
    params[4] = descriptor;
    g_callback(g_user, DOMAIN_LAUNCH, CBID_DESCRIPTOR_UPLOAD, params);
    return 1;
}

/* ---- Devices ---------------------------------------------------------------------------------------- */
#define FAKE_CUDA_DEFAULT_UUID "GPU-00000000-0000-0000-0000-000000000001" /* the built-in H200 (gpu_key) */
#define FAKE_MAX_DEVICES 16
#define UUID_TEXT 40

static char g_machine[FAKE_MAX_DEVICES][UUID_TEXT + 1];
static int g_machine_count = -1;
static int g_visible[FAKE_MAX_DEVICES]; /* ordinal -> machine index */
static int g_visible_count;
static __thread int t_device;

static void split_list(const char* text, void (*take)(const char* item, size_t length)) {
    while (text != NULL && *text != '\0') {
        const size_t length = strcspn(text, ",");
        take(text, length);
        text += length;
        if (*text == ',') ++text;
    }
}

static void take_machine(const char* item, size_t length) {
    if (length != UUID_TEXT || g_machine_count >= FAKE_MAX_DEVICES) return;
    memcpy(g_machine[g_machine_count], item, UUID_TEXT);
    g_machine[g_machine_count++][UUID_TEXT] = '\0';
}

static void take_visible(const char* item, size_t length) {
    if (g_visible_count >= FAKE_MAX_DEVICES) return;
    /* A UUID or, as CUDA takes it, a prefix of exactly one ("GPU-3ecd459c"). */
    int match = -1, matches = 0;
    for (int m = 0; m < g_machine_count; ++m)
        if (length >= 5 && length <= UUID_TEXT && strncasecmp(item, g_machine[m], length) == 0) {
            match = m;
            ++matches;
        }
    if (matches == 1) g_visible[g_visible_count++] = match;
    if (length > 0 && length < 3 && item[0] >= '0' && item[0] <= '9') {
        const int index = atoi(item);
        if (index < g_machine_count) g_visible[g_visible_count++] = index;
    }
}

static void load_devices(void) {
    if (g_machine_count >= 0) return;
    g_machine_count = 0;
    const char* machine = getenv("FAKE_CUDA_GPUS");
    split_list(machine != NULL && machine[0] != '\0' ? machine : FAKE_CUDA_DEFAULT_UUID, take_machine);
    const char* visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible == NULL) {
        for (int m = 0; m < g_machine_count; ++m) g_visible[g_visible_count++] = m;
    } else {
        split_list(visible, take_visible);
    }
}

EXPORT int cuCtxGetDevice(int* device) {
    load_devices();
    const char* fail = getenv("FAKE_CUDA_CTX_FAIL");
    if (device == NULL || (fail != NULL && strcmp(fail, "1") == 0)) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
    if (t_device >= g_visible_count) return 101;                               /* CUDA_ERROR_INVALID_DEVICE */
    *device = t_device;
    return 0;
}

/* Contexts: one per visible device, current per thread (what the test's fake_cuda_set_device chose). */
static char g_contexts[64];

EXPORT int cuCtxGetCurrent(void** context) {
    load_devices();
    if (context == NULL) return 1;
    *context = t_device < g_visible_count ? &g_contexts[t_device] : NULL;
    return 0;
}

EXPORT int cuCtxSetCurrent(void* context) {
    load_devices();
    const uintptr_t offset = (uintptr_t)context - (uintptr_t)g_contexts;
    if (context == NULL || (uintptr_t)context < (uintptr_t)g_contexts || offset >= (uintptr_t)g_visible_count) return 201;
    t_device = (int)offset;
    return 0;
}

EXPORT int cuDeviceGetUuid_v2(unsigned char uuid[16], int device) {
    load_devices();
    if (uuid == NULL || device < 0 || device >= g_visible_count) return 101;
    const char* text = g_machine[g_visible[device]] + 4; /* past "GPU-" */
    int n = 0;
    for (const char* p = text; *p != '\0' && n < 32; ++p) {
        if (*p == '-') continue;
        unsigned value = 0;
        if (sscanf(p, "%1x", &value) != 1) return 1;
        if (n % 2 == 0) uuid[n / 2] = (unsigned char)(value << 4);
        else uuid[n / 2] |= (unsigned char)value;
        ++n;
    }
    return n == 32 ? 0 : 1;
}

/* cuInit, cuDeviceGetCount and cuDeviceGetAttribute, for the libsmctrl API's information calls: every GPU
 * is an H100/H200-like one (compute capability 9.0) with $FAKE_CUDA_SMS SMs (default 132). */
EXPORT int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }

EXPORT int cuDeviceGetCount(int* count) {
    load_devices();
    if (count == NULL) return 1;
    *count = g_visible_count;
    return 0;
}

EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
    load_devices();
    if (value == NULL || device < 0 || device >= g_visible_count) return 101;
    const char* sms = getenv("FAKE_CUDA_SMS");
    if (attribute == 16) *value = sms != NULL && sms[0] != '\0' ? atoi(sms) : 132; /* MULTIPROCESSOR_COUNT */
    else if (attribute == 75) *value = 9;  /* COMPUTE_CAPABILITY_MAJOR */
    else if (attribute == 76) *value = 0;  /* COMPUTE_CAPABILITY_MINOR */
    else return 1;
    return 0;
}

/* The test's cudaSetDevice: 0, or 1 when the process sees no such device. */
EXPORT int fake_cuda_set_device(int ordinal) {
    load_devices();
    if (ordinal < 0 || ordinal >= g_visible_count) return 1;
    t_device = ordinal;
    return 0;
}

/* The test's kernel launch: returns 1 if the launch callback ran, 0 if none is subscribed and enabled. */
EXPORT int fake_cuda_launch(unsigned version, unsigned char* descriptor) {
    return fake_cuda_build_descriptor(version, descriptor);
}
