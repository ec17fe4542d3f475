/*
 * A program written against libsmctrl's API alone, in the style of libsmctrl's own test programs (one check
 * per partitioning type: "a kernel runs only on the TPC its mask leaves enabled"), compiled against
 * gpupart's libsmctrl.h as `#include "libsmctrl.h"` and linked with -lgpupart: the "relinked unchanged"
 * promise of issue 22. It uses the CUDA driver API by its real names, declared here as cuda.h does (CI
 * has no CUDA), and is linked against the TEST DOUBLE driver; the one thing it asks the double besides
 * is fake_cuda_last_descriptor, to see where its kernel would run (a GPU program reads %smid instead:
 * tests/device/smctrl_api.cu). Prints "All tests passed!" and exits 0, or says what failed and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "libsmctrl.h"

typedef struct CUstream_st* CUstream;
typedef struct CUfunc_st* CUfunction;
int cuInit(unsigned flags);
int cuStreamCreate(CUstream* stream, unsigned flags);
int cuStreamDestroy_v2(CUstream stream);
int cuLaunchKernel(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                   unsigned block_z, unsigned shared_bytes, CUstream stream, void** params, void** extra);
int fake_cuda_last_descriptor(unsigned char* out);

enum partitioning_type { PARTITION_GLOBAL, PARTITION_STREAM, PARTITION_NEXT, PARTITION_STREAM_OVERRIDE, PARTITION_NEXT_OVERRIDE };
static const char* const kTypeNames[] = {"global", "stream", "next", "stream over global", "next over stream"};

/* The TPC bits a launched kernel's descriptor allows (all 128 when it carries no mask). */
static void allowed_tpcs(uint32_t allowed[4]) {
    unsigned char descriptor[512];
    uint32_t word0, mask[4];
    fake_cuda_last_descriptor(descriptor);
    memcpy(&word0, descriptor, sizeof word0);
    memcpy(mask, descriptor + 304, sizeof mask);
    for (int i = 0; i < 4; ++i) allowed[i] = (word0 & 0x80000000u) != 0 ? ~mask[i] : ~0u;
}

/* Each of the first TPCs of every 64-bit word position tried alone, as libsmctrl's tests walk TPCs. */
static int test_constrained_location(enum partitioning_type type, CUstream stream) {
    static const int kTpcs[] = {0, 1, 9, 31, 32, 54, 62};
    int failures = 0;
    for (size_t k = 0; k < sizeof kTpcs / sizeof kTpcs[0]; ++k) {
        const int tpc = kTpcs[k];
        const uint64_t only_this = ~(1ull << tpc);
        const uint64_t another = ~(1ull << ((tpc + 1) % 63));
        switch (type) {
        case PARTITION_GLOBAL: libsmctrl_set_global_mask(only_this); break;
        case PARTITION_STREAM: libsmctrl_set_stream_mask(stream, only_this); break;
        case PARTITION_NEXT: libsmctrl_set_next_mask(only_this); break;
        case PARTITION_STREAM_OVERRIDE:
            libsmctrl_set_global_mask(another);
            libsmctrl_set_stream_mask(stream, only_this);
            break;
        case PARTITION_NEXT_OVERRIDE:
            libsmctrl_set_stream_mask(stream, another);
            libsmctrl_set_next_mask(only_this);
            break;
        }
        if (cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL) != 0) {
            fprintf(stderr, "%s: the launch failed\n", kTypeNames[type]);
            return 1;
        }
        uint32_t allowed[4];
        allowed_tpcs(allowed);
        uint32_t expected[4] = {0, 0, 0, 0};
        expected[tpc / 32] = 1u << (tpc % 32);
        if (memcmp(allowed, expected, sizeof expected) != 0) {
            fprintf(stderr, "%s: a kernel masked to TPC %d may run on 0x%08x%08x%08x%08x\n", kTypeNames[type], tpc,
                    allowed[3], allowed[2], allowed[1], allowed[0]);
            ++failures;
        }
    }
    return failures;
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
    int failures = 0;
    for (int type = PARTITION_GLOBAL; type <= PARTITION_NEXT_OVERRIDE; ++type)
        failures += test_constrained_location((enum partitioning_type)type, stream);
    cuStreamDestroy_v2(stream);
    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("All tests passed!\n");
    return 0;
}
