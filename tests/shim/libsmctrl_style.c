/*
 * libsmctrl's test suite, as this project's own test (written anew against libsmctrl's API alone): compiled
 * against gpupart's libsmctrl.h as `#include "libsmctrl.h"` and linked with -lgpupart, the way a libsmctrl
 * program is relinked unchanged. It uses the CUDA driver API by its real names, declared here as cuda.h does
 * (CI has no CUDA), and is linked against the TEST DOUBLE driver, which models the H200 (fake_launch.c):
 * fake_cuda_last_sms says which SMs the last kernel could run on, as %smid does on a GPU
 * (tests/device/smctrl_api.cu runs the same cases there).
 *
 * The cases, in libsmctrl's numbering (TPC k = SMs 2k and 2k+1):
 *  - masks: global, stream, next, stream over global, next over stream and global; each allowing TPC k
 *    alone for k = 0, 32 and 64 (as libsmctrl's tests walk 32-TPC boundaries), through the 64-bit calls
 *    where they can name k and the _ext calls always. The kernel must run on SMs 2k and 2k+1 only.
 *  - GPC info: per-GPC masks of TPC numbers, pairwise disjoint, their union TPCs 0..N-1 with N from
 *    get_tpc_info; the 64-bit form refuses a GPU with more than 64 TPCs; a device the process does not
 *    have is an error; every failure leaves the outputs zero (NULL).
 * Needs a GPC map for CUDA device 0 (libsmctrl_style.sh writes one). Prints one line per case and
 * "All tests passed!", exit 0; or says on stderr what failed and exits 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "libsmctrl.h"

typedef struct CUstream_st* CUstream;
typedef struct CUfunc_st* CUfunction;
int cuInit(unsigned flags);
int cuDeviceGetCount(int* count);
int cuStreamCreate(CUstream* stream, unsigned flags);
int cuStreamDestroy_v2(CUstream stream);
int cuLaunchKernel(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                   unsigned block_z, unsigned shared_bytes, CUstream stream, void** params, void** extra);
int fake_cuda_last_sms(uint32_t sms[8]);

enum partitioning { GLOBAL, STREAM, NEXT, STREAM_OVER_GLOBAL, NEXT_OVER_STREAM };
static const char* const kNames[] = {"global", "stream", "next", "stream over global", "next over stream and global"};

static int g_failures;

static void fail(const char* format, const char* what, int tpc, const char* detail) {
    fprintf(stderr, format, what, tpc, detail);
    ++g_failures;
}

static void set_global(uint128_t mask, int wide) {
    if (wide) libsmctrl_set_global_mask_ext(mask);
    else libsmctrl_set_global_mask((uint64_t)mask);
}
static void set_stream(CUstream stream, uint128_t mask, int wide) {
    if (wide) libsmctrl_set_stream_mask_ext(stream, mask);
    else libsmctrl_set_stream_mask(stream, (uint64_t)mask);
}
static void set_next(uint128_t mask, int wide) {
    if (wide) libsmctrl_set_next_mask_ext(mask);
    else libsmctrl_set_next_mask((uint64_t)mask);
}

/* "SMs a-b,c" of a bit set, for messages. */
static void sm_text(const uint32_t sms[8], char* out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "SMs ");
    int first = 1;
    for (int sm = 0; sm < 256 && n < size; ++sm) {
        if (((sms[sm / 32] >> (sm % 32)) & 1u) == 0) continue;
        int end = sm;
        while (end + 1 < 256 && ((sms[(end + 1) / 32] >> ((end + 1) % 32)) & 1u) != 0) ++end;
        n += (size_t)snprintf(out + n, size - n, end > sm ? "%s%d-%d" : "%s%d", first ? "" : ",", sm, end);
        first = 0;
        sm = end;
    }
    if (first && n < size) snprintf(out + n, size - n, "none");
}

/* Launches into `stream` and checks that the kernel may run on SMs 2k and 2k+1 and nowhere else. */
static void expect_tpc(const char* what, int tpc, CUstream stream) {
    if (cuLaunchKernel(NULL, 142, 1, 1, 1024, 1, 1, 0, stream, NULL, NULL) != 0) {
        fail("%s, TPC %d: the launch failed%s\n", what, tpc, "");
        return;
    }
    uint32_t sms[8], expected[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int count = fake_cuda_last_sms(sms);
    expected[(2 * tpc) / 32] |= 3u << ((2 * tpc) % 32);
    char ran[200], message[256];
    sm_text(sms, ran, sizeof ran);
    if (count < 0) {
        fail("%s, TPC %d: %s\n", what, tpc, "the launch built no Hopper descriptor");
    } else if (memcmp(sms, expected, sizeof sms) != 0) {
        snprintf(message, sizeof message, "ran on %s, expected %d-%d", ran, 2 * tpc, 2 * tpc + 1);
        fail("%s, TPC %d: %s\n", what, tpc, message);
    } else {
        printf("%s, TPC %d: %s\n", what, tpc, ran);
    }
}

/* One partitioning type with only TPC `tpc` allowed, through the 64-bit calls (`wide` 0) or _ext. */
static void test_location(enum partitioning type, int tpc, int wide, CUstream stream) {
    const uint128_t only = ~((uint128_t)1 << tpc); /* disable mask: every TPC but `tpc` */
    char what[96];
    snprintf(what, sizeof what, "%s (%s)", kNames[type], wide ? "_ext" : "64-bit");
    switch (type) {
    case GLOBAL: set_global(only, wide); break;
    case STREAM: set_stream(stream, only, wide); break;
    case NEXT: set_next(only, wide); break;
    case STREAM_OVER_GLOBAL:
        set_global(~only, 1); /* everything but `tpc` */
        set_stream(stream, only, wide);
        break;
    case NEXT_OVER_STREAM:
        set_global(~only, 1);
        set_stream(stream, ~only, 1);
        set_next(only, wide);
        break;
    }
    const char* error = gpupart_last_error();
    if (error[0] != '\0') {
        fail("%s, TPC %d: setting the mask failed: %s\n", what, tpc, error);
        return;
    }
    expect_tpc(what, tpc, stream);
    if (type == NEXT || type == NEXT_OVER_STREAM) { /* used once: the next launch is the stream's or global again */
        cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
        uint32_t sms[8];
        fake_cuda_last_sms(sms);
        if (type == NEXT_OVER_STREAM && ((sms[(2 * tpc) / 32] >> ((2 * tpc) % 32)) & 3u) != 0)
            fail("%s, TPC %d: %s\n", what, tpc, "the launch after the next one still ran on the next mask's TPC");
    }
    /* Back to no choice for the next case: every TPC, on every stream. */
    libsmctrl_set_global_mask_ext(0);
    libsmctrl_set_stream_mask_ext(stream, 0);
}

/* GPC info: numbers, disjoint, union 0..N-1; errors zero the outputs. */
static void test_gpc_info(void) {
    uint32_t tpcs = 0, gpcs = 0xdeadbeef;
    uint128_t* masks = (uint128_t*)(uintptr_t)0x1;
    int error = libsmctrl_get_tpc_info(&tpcs, 0);
    if (error != 0 || tpcs == 0 || tpcs > 128) {
        fail("%s %d: get_tpc_info failed: %s\n", "GPC info, device", 0, gpupart_last_error());
        return;
    }
    error = libsmctrl_get_gpc_info_ext(&gpcs, &masks, 0);
    if (error != 0 || gpcs == 0 || gpcs > 32 || masks == NULL) {
        fail("%s %d: get_gpc_info_ext failed: %s\n", "GPC info, device", 0, gpupart_last_error());
        return;
    }
    uint128_t all = 0;
    int overlap = 0;
    for (uint32_t g = 0; g < gpcs; ++g) {
        overlap |= (all & masks[g]) != 0 || masks[g] == 0;
        all |= masks[g];
    }
    const uint128_t expected = tpcs == 128 ? ~(uint128_t)0 : ((uint128_t)1 << tpcs) - 1;
    if (overlap) fail("%s %d: %s\n", "GPC info, device", 0, "a GPC is empty or two GPCs share a TPC");
    if (all != expected) fail("%s %d: %s\n", "GPC info, device", 0, "the GPCs' TPCs are not TPCs 0 to N-1 (N from get_tpc_info)");
    /* The H200 the test double models: TPC 0's GPC is SMs 0,1,16,17,32,33,48,49 and 124-131 (the mask-bit log
     * in tests/fixtures/h200), TPCs 0, 8, 16, 24 and 62-65 in numbers. */
    const uint128_t gpc_of_0 = ((uint128_t)0xf << 62) | 0x01010101u;
    int found = 0;
    for (uint32_t g = 0; g < gpcs; ++g) found |= masks[g] == gpc_of_0;
    if (!found) fail("%s %d: %s\n", "GPC info, device", 0, "no GPC is TPCs 0,8,16,24,62-65 (TPC 0's GPC on the H200)");
    printf("GPC info: %u GPCs, %u TPCs\n", gpcs, tpcs);

    /* Every failure leaves zero and NULL, whatever the program had there. */
    uint64_t* masks64 = (uint64_t*)(uintptr_t)0x1;
    gpcs = 0xdeadbeef;
    error = libsmctrl_get_gpc_info(&gpcs, &masks64, 0);
    if (tpcs > 64 && (error != ERANGE || gpcs != 0 || masks64 != NULL))
        fail("%s %d: %s\n", "GPC info (64-bit), device", 0, "more than 64 TPCs: expected ERANGE with zeroed outputs");
    int count = 0;
    cuDeviceGetCount(&count);
    for (int dev = count; dev <= count + 1; ++dev) { /* devices this process does not have */
        gpcs = tpcs = 0xdeadbeef;
        masks = (uint128_t*)(uintptr_t)0x1;
        masks64 = (uint64_t*)(uintptr_t)0x1;
        if (libsmctrl_get_gpc_info_ext(&gpcs, &masks, dev) != ENODEV || gpcs != 0 || masks != NULL)
            fail("%s %d: %s\n", "GPC info (_ext), missing device", dev, "expected ENODEV with zeroed outputs");
        gpcs = 0xdeadbeef;
        if (libsmctrl_get_gpc_info(&gpcs, &masks64, dev) != ENODEV || gpcs != 0 || masks64 != NULL)
            fail("%s %d: %s\n", "GPC info (64-bit), missing device", dev, "expected ENODEV with zeroed outputs");
        if (libsmctrl_get_tpc_info(&tpcs, dev) != ENODEV || tpcs != 0)
            fail("%s %d: %s\n", "TPC info, missing device", dev, "expected ENODEV with a zeroed output");
    }
    printf("GPC info: missing devices refused with zeroed outputs\n");
}

int main(void) {
    uint32_t num_tpcs = 0;
    CUstream stream = NULL;
    if (cuInit(0) != 0 || cuStreamCreate(&stream, 0) != 0) {
        fprintf(stderr, "no CUDA\n");
        return 1;
    }
    const int info = libsmctrl_get_tpc_info_cuda(&num_tpcs, 0);
    if (info != 0 || num_tpcs == 0) {
        fprintf(stderr, "libsmctrl_get_tpc_info_cuda failed (%d)\n", info);
        return 1;
    }
    printf("%u TPCs\n", num_tpcs);
    for (int type = GLOBAL; type <= NEXT_OVER_STREAM; ++type)
        for (int tpc = 0; tpc < (int)num_tpcs && tpc < 128; tpc += 32) {
            if (tpc < 64) test_location((enum partitioning)type, tpc, 0, stream);
            test_location((enum partitioning)type, tpc, 1, stream);
        }
    test_gpc_info();
    cuStreamDestroy_v2(stream);
    if (g_failures != 0) {
        fprintf(stderr, "%d checks failed\n", g_failures);
        return 1;
    }
    printf("All tests passed!\n");
    return 0;
}
