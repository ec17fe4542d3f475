/*
 * The libsmctrl API's information calls (TPC counts, TPCs per GPC) from gpupart's GPC map files, which
 * gpupart commands write from the live topology (docs/registry-layout-5.md decision 6): no kernel module.
 * `dev` is the CUDA device ordinal; the map is looked up by that device's UUID, in this user's registry
 * directory first, then root's. Also the GPUs' real TPCs that the mask setters check against.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app_mask_state.h"
#include "gpcs_file.h"
#include "gpupart/libsmctrl.h"
#include "registry_slot.h"
#include "shim_core.h"
#include "shim_devices.h"
#include "smctrl_common.h"

#define ATTRIBUTE_SM_COUNT 16     /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define ATTRIBUTE_CC_MAJOR 75     /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define ATTRIBUTE_CC_MINOR 76

static pthread_mutex_t g_info_lock = PTHREAD_MUTEX_INITIALIZER; /* the buffers handed out, the numbering cache */
static uint64_t g_gpcs64[GPUPART_MAX_ORDINALS][GPUPART_MAX_GPCS];
static uint128_t g_gpcs128[GPUPART_MAX_ORDINALS][GPUPART_MAX_GPCS];
static struct {
    int scanned;                /* looked up once quietly by the setters' scan: a missing map is said once */
    int known;                  /* its map is read and handed to the launch path */
    uint32_t tpc_count;
    char uuid[GPUPART_UUID_TEXT_BYTES];
} g_numbered[GPUPART_MAX_ORDINALS];

/* The UUID of CUDA device `dev` (initialising the driver, as libsmctrl's info calls do). */
static int device_uuid(const char* call, int dev, struct gpupart_gpu_uuid* uuid) {
    if (gpupart_cu.init == NULL || gpupart_cu.device_get_count == NULL || gpupart_cu.device_get_uuid == NULL)
        return gpupart_api_fail(ENOSYS, call, "this CUDA driver lacks cuInit, cuDeviceGetCount or cuDeviceGetUuid");
    int result = gpupart_cu.init(0);
    int count = 0;
    if (result == 0) result = gpupart_cu.device_get_count(&count);
    if (result != 0) return gpupart_api_fail(EIO, call, "the CUDA driver failed (CUresult %d)", result);
    if (dev < 0 || dev >= count || dev >= GPUPART_MAX_ORDINALS)
        return gpupart_api_fail(ENODEV, call, "CUDA device %d does not exist: this process sees %d (CUDA_VISIBLE_DEVICES "
                                "applies)", dev, count);
    unsigned char bytes[16];
    if ((result = gpupart_cu.device_get_uuid(bytes, dev)) != 0)
        return gpupart_api_fail(EIO, call, "the CUDA driver gave no UUID for device %d (CUresult %d)", dev, result);
    gpupart_uuid_from_bytes(bytes, uuid);
    return 0;
}

/* The GPU's map from this user's registry directory, else root's. With `call`, a missing or unusable map is
 * an error naming the command that writes it; without, just nonzero. */
static int read_map(const char* call, int dev, const struct gpupart_gpu_uuid* uuid, struct gpupart_gpcs_file* map) {
    char root[256], dir[512], text[GPUPART_UUID_TEXT_BYTES], problem[256] = "";
    int problem_code = 0;
    gpupart_uuid_format(uuid, text);
    const uint32_t uids[2] = {(uint32_t)getuid(), 0u};
    if (gpupart_registry_dir(root, sizeof root) == 0)
        for (int i = 0; i < (uids[0] == 0 ? 1 : 2); ++i) {
            if (gpupart_user_dir(root, uids[i], 0, dir, sizeof dir) != 0) continue;
            const int result = gpupart_gpcs_read(dir, uids[i], uuid, map);
            if (result == 0) return 0;
            if (result != -ENOENT && problem_code == 0) {
                problem_code = -result;
                snprintf(problem, sizeof problem, "%.120s/%s%s: %.60s", dir, text, GPUPART_GPCS_SUFFIX,
                         result == -EPROTO ? "not a GPC map of this layout and GPU" : strerror(-result));
            }
        }
    if (call == NULL) return -1;
    if (problem_code != 0)
        return gpupart_api_fail(problem_code == EPERM || problem_code == EPROTO ? problem_code : EIO, call,
                                "the GPC map %s: run `gpupart gpcs --gpu %s --write` to write it anew", problem, text);
    return gpupart_api_fail(ENODATA, call, "no GPC map for %s (CUDA device %d): run `gpupart gpcs --gpu %s --write` (or "
                            "`gpupart topology`) once on this machine", text, dev, text);
}

/* Hands the launch path the numbering of CUDA device `ordinal` (under g_info_lock). */
static void remember_map(int ordinal, const struct gpupart_gpu_uuid* uuid, const struct gpupart_gpcs_file* map) {
    g_numbered[ordinal].tpc_count = map->tpc_count;
    gpupart_uuid_format(uuid, g_numbered[ordinal].uuid);
    g_numbered[ordinal].known = 1;
    gpupart_app_learn_map(gpupart_devices_gpu_of_ordinal(gpupart_shim_slot(), ordinal), map->bit_of_tpc);
}

/* The map of CUDA device `dev` into *map; 0 or an errno value (the thread's error says why). A map read
 * here also gives the launch path that GPU's numbering. */
static int map_of(const char* call, int outputs_given, int dev, struct gpupart_gpcs_file* map) {
    int error = gpupart_api_begin(call, 1);
    if (error != 0) return error;
    if (!outputs_given) return gpupart_api_fail(EINVAL, call, "an output pointer is NULL");
    struct gpupart_gpu_uuid uuid;
    if ((error = device_uuid(call, dev, &uuid)) != 0) return error;
    if ((error = read_map(call, dev, &uuid, map)) != 0) return error;
    pthread_mutex_lock(&g_info_lock);
    if (!g_numbered[dev].known) remember_map(dev, &uuid, map);
    pthread_mutex_unlock(&g_info_lock);
    return 0;
}

/* Each GPC's TPCs as TPC numbers (the map keeps descriptor bits; bit_of_tpc says which number each is). */
static void gpc_numbers(const struct gpupart_gpcs_file* map, uint32_t numbers[GPUPART_MAX_GPCS][4]) {
    memset(numbers, 0, GPUPART_MAX_GPCS * 4 * sizeof(uint32_t));
    for (uint32_t k = 0; k < map->tpc_count && k < 128u; ++k) {
        const uint32_t bit = map->bit_of_tpc[k];
        for (uint32_t g = 0; g < map->gpc_count && g < GPUPART_MAX_GPCS; ++g)
            if ((map->gpc_tpcs[g][bit / 32u] & (1u << (bit % 32u))) != 0) numbers[g][k / 32u] |= 1u << (k % 32u);
    }
}

/* Like libsmctrl, every information call first sets its outputs to 0 (and the array pointer to NULL), so a
 * program that prints them after an error prints nothing it could mistake for a GPU. */
GPUPART_API int libsmctrl_get_gpc_info(uint32_t* num_enabled_gpcs, uint64_t** tpcs_for_gpc, int dev) {
    if (num_enabled_gpcs != NULL) *num_enabled_gpcs = 0;
    if (tpcs_for_gpc != NULL) *tpcs_for_gpc = NULL;
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_enabled_gpcs != NULL && tpcs_for_gpc != NULL, dev, &map);
    if (error != 0) return error;
    if (map.tpc_count > 64)
        return gpupart_api_fail(ERANGE, __func__, "CUDA device %d has %u TPCs, more than 64-bit masks can name: use "
                                "libsmctrl_get_gpc_info_ext", dev, map.tpc_count);
    uint32_t numbers[GPUPART_MAX_GPCS][4];
    gpc_numbers(&map, numbers);
    pthread_mutex_lock(&g_info_lock);
    for (uint32_t g = 0; g < map.gpc_count; ++g) g_gpcs64[dev][g] = (uint64_t)numbers[g][0] | (uint64_t)numbers[g][1] << 32;
    pthread_mutex_unlock(&g_info_lock);
    *num_enabled_gpcs = map.gpc_count;
    *tpcs_for_gpc = g_gpcs64[dev];
    return 0;
}

GPUPART_API int libsmctrl_get_gpc_info_ext(uint32_t* num_enabled_gpcs, uint128_t** tpcs_for_gpc, int dev) {
    if (num_enabled_gpcs != NULL) *num_enabled_gpcs = 0;
    if (tpcs_for_gpc != NULL) *tpcs_for_gpc = NULL;
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_enabled_gpcs != NULL && tpcs_for_gpc != NULL, dev, &map);
    if (error != 0) return error;
    uint32_t numbers[GPUPART_MAX_GPCS][4];
    gpc_numbers(&map, numbers);
    pthread_mutex_lock(&g_info_lock);
    for (uint32_t g = 0; g < map.gpc_count; ++g) {
        uint128_t value = 0;
        for (int w = 3; w >= 0; --w) value = (value << 32) | numbers[g][w];
        g_gpcs128[dev][g] = value;
    }
    pthread_mutex_unlock(&g_info_lock);
    *num_enabled_gpcs = map.gpc_count;
    *tpcs_for_gpc = g_gpcs128[dev];
    return 0;
}

GPUPART_API int libsmctrl_get_tpc_info(uint32_t* num_tpcs, int dev) {
    if (num_tpcs != NULL) *num_tpcs = 0;
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_tpcs != NULL, dev, &map);
    if (error != 0) return error;
    *num_tpcs = map.tpc_count;
    return 0;
}

GPUPART_API int libsmctrl_get_tpc_info_cuda(uint32_t* num_tpcs, int cuda_dev) {
    if (num_tpcs != NULL) *num_tpcs = 0;
    int error = gpupart_api_begin(__func__, 1);
    if (error != 0) return error;
    if (num_tpcs == NULL) return gpupart_api_fail(EINVAL, __func__, "num_tpcs is NULL");
    struct gpupart_gpu_uuid uuid;
    if ((error = device_uuid(__func__, cuda_dev, &uuid)) != 0) return error;
    if (gpupart_cu.device_get_attribute == NULL)
        return gpupart_api_fail(ENOSYS, __func__, "this CUDA driver lacks cuDeviceGetAttribute");
    int sms = 0, major = 0, minor = 0;
    int result = gpupart_cu.device_get_attribute(&sms, ATTRIBUTE_SM_COUNT, cuda_dev);
    if (result == 0) result = gpupart_cu.device_get_attribute(&major, ATTRIBUTE_CC_MAJOR, cuda_dev);
    if (result == 0) result = gpupart_cu.device_get_attribute(&minor, ATTRIBUTE_CC_MINOR, cuda_dev);
    if (result != 0) return gpupart_api_fail(EIO, __func__, "the CUDA driver failed (CUresult %d)", result);
    if (major < 3 || (major == 3 && minor < 5))
        return gpupart_api_fail(ENOTSUP, __func__, "compute capability %d.%d: TPC masks need 3.5 or later", major, minor);
    /* Two SMs per TPC from Volta on and on the P100 (6.0); one on the other Kepler/Maxwell/Pascal chips. */
    const int per_tpc = major > 6 || (major == 6 && minor == 0) ? 2 : 1;
    *num_tpcs = (uint32_t)(sms / per_tpc);
    return 0;
}

/* ---- Numbering for the mask setters and the launch path ------------------------------------------ */

int gpupart_api_numbering(const char* call, int ordinal, uint32_t* tpc_count, char* uuid_text) {
    pthread_mutex_lock(&g_info_lock);
    const int known = ordinal >= 0 && ordinal < GPUPART_MAX_ORDINALS && g_numbered[ordinal].known;
    pthread_mutex_unlock(&g_info_lock);
    if (!known) { /* read again at each call until it works: the error names the command that writes it */
        struct gpupart_gpu_uuid uuid;
        struct gpupart_gpcs_file map;
        int error = device_uuid(call, ordinal, &uuid);
        if (error == 0) error = read_map(call, ordinal, &uuid, &map);
        if (error != 0) return error;
        pthread_mutex_lock(&g_info_lock);
        if (!g_numbered[ordinal].known) remember_map(ordinal, &uuid, &map);
        pthread_mutex_unlock(&g_info_lock);
    }
    pthread_mutex_lock(&g_info_lock);
    *tpc_count = g_numbered[ordinal].tpc_count;
    memcpy(uuid_text, g_numbered[ordinal].uuid, GPUPART_UUID_TEXT_BYTES);
    pthread_mutex_unlock(&g_info_lock);
    return 0;
}

static uint32_t g_scan_done; /* atomic: every device was looked up once (the device count never changes) */

void gpupart_api_scan_maps(int reported) {
    if (__atomic_load_n(&g_scan_done, __ATOMIC_ACQUIRE)) return; /* setters may run before every launch: no driver call */
    int count = 0;
    if (gpupart_cu.init == NULL || gpupart_cu.device_get_count == NULL || gpupart_cu.device_get_uuid == NULL ||
        gpupart_cu.init(0) != 0 || gpupart_cu.device_get_count(&count) != 0)
        return;
    for (int ordinal = 0; ordinal < count && ordinal < GPUPART_MAX_ORDINALS; ++ordinal) {
        pthread_mutex_lock(&g_info_lock);
        const int skip = g_numbered[ordinal].scanned || g_numbered[ordinal].known;
        g_numbered[ordinal].scanned = 1;
        pthread_mutex_unlock(&g_info_lock);
        if (skip) continue;
        unsigned char bytes[16];
        struct gpupart_gpu_uuid uuid;
        struct gpupart_gpcs_file map;
        if (gpupart_cu.device_get_uuid(bytes, ordinal) != 0) continue;
        gpupart_uuid_from_bytes(bytes, &uuid);
        if (read_map(NULL, ordinal, &uuid, &map) == 0) {
            pthread_mutex_lock(&g_info_lock);
            if (!g_numbered[ordinal].known) remember_map(ordinal, &uuid, &map);
            pthread_mutex_unlock(&g_info_lock);
            continue;
        }
        if (ordinal == reported) continue;
        char text[GPUPART_UUID_TEXT_BYTES];
        gpupart_uuid_format(&uuid, text);
        fprintf(stderr, "libgpupart: no usable GPC map for %s (CUDA device %d): the masks this program sets do not "
                "apply to its kernels there; run `gpupart gpcs --gpu %s --write` once on this machine\n", text, ordinal, text);
    }
    __atomic_store_n(&g_scan_done, 1u, __ATOMIC_RELEASE);
}
