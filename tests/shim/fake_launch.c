/*
 * TEST DOUBLE of the CUDA driver, part 3: streams and the launch functions, for the libsmctrl API's
 * stream and next masks (backend/shim/launch_stream.c). Never installed, never used outside tests/shim.
 *
 * Like the real driver (docs/registry-layout-5.md decision 4), cuLaunchKernel, cuLaunchKernelEx and
 * cuStreamDestroy_v2 call the subscribed callback at enter and exit if it enabled their driver-API cbid
 * (307, 652, 326), with the measured record and CUDA's own parameter structs (generated_cuda_meta.h:
 * hStream at 40 in cuLaunchKernel_params, a CUlaunchConfig* first in cuLaunchKernelEx_params with hStream
 * at 32 in it); between the two a launch builds its kernel's descriptor, which runs the descriptor
 * callback (fake_cuda_build_descriptor). The test reads that descriptor back with
 * fake_cuda_last_descriptor (per thread, like the launch), and where the kernel would run with
 * fake_cuda_last_sms (the SMs of the H200's TPCs that its descriptor allows).
 * Streams come from a pool of 128 and a destroyed stream's place is the next one given out, so a new stream
 * gets the address of the one destroyed last, as allocators do.
 * Like the driver measured on the H200 (docs/launch-path.md), a stream handle's first word points to the
 * stream's object, which holds a TPC mask at 0x51c: an enable word and four words of TPC numbers, a set bit
 * keeping that TPC out. A fresh stream's reads as an empty mask; a launch on a stream whose enable word is
 * set builds its descriptor with that mask, translated into descriptor bits.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fake_libcuda.h"

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define INVALID_VALUE 1
#define INVALID_HANDLE 400
#define CB_LAUNCH_KERNEL 307
#define CB_STREAM_DESTROY_V2 326
#define CB_LAUNCH_KERNEL_EX 652
#define STREAMS 128

#define STREAM_MASK_OFFSET 0x51c
struct fake_stream_object {
    unsigned char before_mask[STREAM_MASK_OFFSET];
    uint32_t mask[5]; /* enable, then four disable words in TPC numbers */
    unsigned char after_mask[12];
};
struct fake_stream {
    struct fake_stream_object* object; /* first, as the driver's */
    int alive;
    unsigned char state[52];
};
static struct fake_stream g_streams[STREAMS];
static struct fake_stream_object g_objects[STREAMS];
static int g_free_lifo[STREAMS];
static int g_free_count = -1;
static unsigned g_launch_version = 0x40;
static __thread unsigned char t_descriptor[FAKE_CUDA_DESCRIPTOR_BYTES];
static __thread int t_called;

/* CUDA's parameter structs, as generated_cuda_meta.h defines them. */
struct launch_kernel_params {
    void* f;
    unsigned grid[3], block[3], shared_bytes;
    void* stream;
    void** kernel_params;
    void** extra;
};
_Static_assert(offsetof(struct launch_kernel_params, stream) == 40, "cuLaunchKernel_params.hStream at 40");
struct launch_config {      /* CUlaunchConfig */
    unsigned grid[3], block[3], shared_bytes;
    void* stream;
    void* attrs;
    unsigned attr_count;
};
_Static_assert(offsetof(struct launch_config, stream) == 32, "CUlaunchConfig.hStream at 32");
struct launch_kernel_ex_params {
    const struct launch_config* config;
    void* f;
    void** kernel_params;
    void** extra;
};

int fake_cuda_stream_valid(const void* stream) {
    if ((uintptr_t)stream <= 2) return 1; /* NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD */
    for (int i = 0; i < STREAMS; ++i)
        if (stream == &g_streams[i]) return g_streams[i].alive;
    return 0;
}

EXPORT int cuStreamCreate(void** stream, unsigned flags) {
    if (stream == NULL || flags > 1) return INVALID_VALUE;
    if (g_free_count < 0) { /* first use: every place free, the lowest given out first */
        g_free_count = 0;
        for (int i = STREAMS - 1; i >= 0; --i) g_free_lifo[g_free_count++] = i;
    }
    if (g_free_count == 0) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    const int place = g_free_lifo[--g_free_count];
    g_streams[place].alive = 1;
    memset(&g_objects[place], 0, sizeof g_objects[place]);
    g_streams[place].object = &g_objects[place];
    *stream = &g_streams[place];
    return OK;
}

EXPORT int cuStreamDestroy_v2(void* stream) {
    struct {
        void* stream;
    } params = {stream};
    int result = FAKE_CUDA_NOT_YET;
    fake_cuda_api_record(CB_STREAM_DESTROY_V2, "cuStreamDestroy_v2", &params, &result, FAKE_CUDA_SITE_ENTER);
    result = (uintptr_t)stream > 2 && fake_cuda_stream_valid(stream) ? OK : INVALID_HANDLE;
    if (result == OK) {
        struct fake_stream* s = stream;
        s->alive = 0;
        g_free_lifo[g_free_count++] = (int)(s - g_streams);
    }
    fake_cuda_api_record(CB_STREAM_DESTROY_V2, "cuStreamDestroy_v2", &params, &result, FAKE_CUDA_SITE_EXIT);
    return result;
}

/* Builds the kernel's descriptor into this thread's buffer (the descriptor callback runs). */
static int build(const void* stream) {
    if (!fake_cuda_stream_valid(stream)) return INVALID_HANDLE;
    const uint32_t* field = (uintptr_t)stream > 2 ? ((const struct fake_stream*)stream)->object->mask : NULL;
    t_called = fake_cuda_build_descriptor_on(g_launch_version, t_descriptor, field);
    return OK;
}

EXPORT int cuLaunchKernel(void* f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                          unsigned block_z, unsigned shared_bytes, void* stream, void** kernel_params, void** extra) {
    struct launch_kernel_params params = {f, {grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes, stream,
                                          kernel_params, extra};
    int result = FAKE_CUDA_NOT_YET;
    fake_cuda_api_record(CB_LAUNCH_KERNEL, "cuLaunchKernel", &params, &result, FAKE_CUDA_SITE_ENTER);
    result = build(params.stream);
    fake_cuda_api_record(CB_LAUNCH_KERNEL, "cuLaunchKernel", &params, &result, FAKE_CUDA_SITE_EXIT);
    return result;
}

EXPORT int cuLaunchKernelEx(const void* config, void* f, void** kernel_params, void** extra) {
    struct launch_kernel_ex_params params = {config, f, kernel_params, extra};
    int result = FAKE_CUDA_NOT_YET;
    fake_cuda_api_record(CB_LAUNCH_KERNEL_EX, "cuLaunchKernelEx", &params, &result, FAKE_CUDA_SITE_ENTER);
    result = config != NULL ? build(params.config->stream) : INVALID_VALUE;
    fake_cuda_api_record(CB_LAUNCH_KERNEL_EX, "cuLaunchKernelEx", &params, &result, FAKE_CUDA_SITE_EXIT);
    return result;
}

/* The descriptor this thread's last launch built (FAKE_CUDA_DESCRIPTOR_BYTES); 1 if the descriptor
 * callback ran for it, 0 if none was subscribed and enabled. */
EXPORT int fake_cuda_last_descriptor(unsigned char* out) {
    memcpy(out, t_descriptor, sizeof t_descriptor);
    return t_called;
}

/* ---- Where a kernel runs: the H200's TPCs ------------------------------------------------------------
 * Every GPU of the test double is the measured H200 (tests/fixtures/h200's
 * mask-bit log): 66 of the descriptor's 128 TPC bits are TPCs, each holding two SMs, and the driver's TPC
 * number k holds SMs 2k and 2k+1. kFirstSmOfBit[b] is the first SM of descriptor bit b, -1 for a hole. */
static const int16_t kFirstSmOfBit[128] = {
    0, 16, 32, 48, -1, -1, -1, -1, -1,                 /* bits 0-8: one GPC of 4 TPCs, then holes */
    2, 18, 34, 50, 64, 78, 92, 106, -1,                /* 9-17 */
    4, 20, 36, 52, 66, 80, 94, 108, -1,                /* 18-26 */
    6, 22, 38, 54, 68, 82, 96, 110, -1,                /* 27-35 */
    8, 24, 40, 56, 70, 84, 98, 112, -1,                /* 36-44 */
    10, 26, 42, 58, 72, 86, 100, 114, -1,              /* 45-53 */
    12, 28, 44, 60, 74, 88, 102, 116, 120,             /* 54-62 */
    14, 30, 46, 62, 76, 90, 104, 118, 122,             /* 63-71 */
    -1, -1, -1, 124, -1, -1, 126, -1, -1, 128, -1, 130, /* 72-83 */
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 84-105 */
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 106-127 */
};
_Static_assert(sizeof kFirstSmOfBit == 128 * sizeof(int16_t), "one entry per descriptor bit");

void fake_cuda_stream_mask_to_descriptor(unsigned char* descriptor, const uint32_t stream_field[5]) {
    uint32_t disable[4] = {~0u, ~0u, ~0u, ~0u}, word0;
    for (int bit = 0; bit < 128; ++bit) {
        if (kFirstSmOfBit[bit] < 0) continue; /* a hole stays disabled */
        const int number = kFirstSmOfBit[bit] / 2;
        if ((__atomic_load_n(&stream_field[1 + number / 32], __ATOMIC_RELAXED) & (1u << (number % 32))) == 0)
            disable[bit / 32] &= ~(1u << (bit % 32));
    }
    memcpy(descriptor + 304, disable, sizeof disable);
    memcpy(&word0, descriptor, sizeof word0);
    word0 |= 0x80000000u;
    memcpy(descriptor, &word0, sizeof word0);
}

/* The SMs a V04 descriptor lets its kernel run on, as the GPU reads it: its TPC mask when the enable bit is
 * set (a set bit disables that TPC), else every SM. */
static void sms_of(const unsigned char* descriptor, uint32_t sms[FAKE_CUDA_SM_WORDS]) {
    uint32_t word0, mask[4] = {0, 0, 0, 0};
    memcpy(&word0, descriptor, sizeof word0);
    if ((word0 & 0x80000000u) != 0) memcpy(mask, descriptor + 304, sizeof mask);
    memset(sms, 0, FAKE_CUDA_SM_WORDS * sizeof(uint32_t));
    for (int bit = 0; bit < 128; ++bit) {
        if (kFirstSmOfBit[bit] < 0 || ((mask[bit / 32] >> (bit % 32)) & 1u) != 0) continue;
        for (int sm = kFirstSmOfBit[bit]; sm <= kFirstSmOfBit[bit] + 1; ++sm) sms[sm / 32] |= 1u << (sm % 32);
    }
}

/* The SMs this thread's last launch could run on (a GPU program reads %smid instead): a bit set of
 * FAKE_CUDA_SM_WORDS words. Returns how many; 0 means the kernel would never run (only holes allowed),
 * -1 that the last launch built no Hopper (0x40) descriptor. */
EXPORT int fake_cuda_last_sms(uint32_t sms[FAKE_CUDA_SM_WORDS]) {
    if (t_descriptor[FAKE_CUDA_VERSION_OFFSET] != 0x40) return -1;
    sms_of(t_descriptor, sms);
    int count = 0;
    for (int w = 0; w < FAKE_CUDA_SM_WORDS; ++w) count += __builtin_popcount(sms[w]);
    return count;
}

/* The descriptor version the launch functions build (default 0x40, Hopper's). */
EXPORT void fake_cuda_set_launch_version(unsigned version) { g_launch_version = version & 0xffu; }
