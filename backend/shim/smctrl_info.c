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

#include "app_masks.h"
#include "gpcs_file.h"
#include "gpupart/libsmctrl.h"
#include "registry_slot.h"
#include "shim_core.h"
#include "shim_devices.h"
#include "smctrl_common.h"

#define ATTRIBUTE_SM_COUNT 16     /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define ATTRIBUTE_CC_MAJOR 75     /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define ATTRIBUTE_CC_MINOR 76

static pthread_mutex_t g_info_lock = PTHREAD_MUTEX_INITIALIZER; /* the buffers handed out, the real-TPC cache */
static uint64_t g_gpcs64[GPUPART_MAX_ORDINALS][GPUPART_MAX_GPCS];
static uint128_t g_gpcs128[GPUPART_MAX_ORDINALS][GPUPART_MAX_GPCS];
static struct {
    int checked;                /* looked up once: a missing map is not looked for again at every mask */
    int known;
    uint32_t real[4];
    char uuid[GPUPART_UUID_TEXT_BYTES];
} g_real_cache[GPUPART_MAX_ORDINALS];

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

static void remember_real(int ordinal, const struct gpupart_gpu_uuid* uuid, const uint32_t real[4]) {
    memcpy(g_real_cache[ordinal].real, real, sizeof g_real_cache[ordinal].real);
    gpupart_uuid_format(uuid, g_real_cache[ordinal].uuid);
    g_real_cache[ordinal].checked = g_real_cache[ordinal].known = 1;
    gpupart_app_learn_real(gpupart_devices_gpu_of_ordinal(gpupart_shim_slot(), ordinal), real);
}

/* The map of CUDA device `dev` into *map; 0 or an errno value (the thread's error says why). A map read
 * here also tells the mask setters that GPU's real TPCs. */
static int map_of(const char* call, uint32_t* out, const void* buffer, int dev, struct gpupart_gpcs_file* map) {
    int error = gpupart_api_begin(call, 1);
    if (error != 0) return error;
    if (out == NULL || buffer == NULL) return gpupart_api_fail(EINVAL, call, "an output pointer is NULL");
    struct gpupart_gpu_uuid uuid;
    if ((error = device_uuid(call, dev, &uuid)) != 0) return error;
    if ((error = read_map(call, dev, &uuid, map)) != 0) return error;
    pthread_mutex_lock(&g_info_lock);
    if (!g_real_cache[dev].known) remember_real(dev, &uuid, map->real_tpcs);
    pthread_mutex_unlock(&g_info_lock);
    return 0;
}

GPUPART_API int libsmctrl_get_gpc_info(uint32_t* num_enabled_gpcs, uint64_t** tpcs_for_gpc, int dev) {
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_enabled_gpcs, tpcs_for_gpc, dev, &map);
    if (error != 0) return error;
    if ((map.real_tpcs[2] | map.real_tpcs[3]) != 0)
        return gpupart_api_fail(ERANGE, __func__, "CUDA device %d has TPCs above bit 63, which 64-bit masks cannot name: "
                                "use libsmctrl_get_gpc_info_ext", dev);
    pthread_mutex_lock(&g_info_lock);
    for (uint32_t g = 0; g < map.gpc_count; ++g)
        g_gpcs64[dev][g] = (uint64_t)map.gpc_tpcs[g][0] | (uint64_t)map.gpc_tpcs[g][1] << 32;
    pthread_mutex_unlock(&g_info_lock);
    *num_enabled_gpcs = map.gpc_count;
    *tpcs_for_gpc = g_gpcs64[dev];
    return 0;
}

GPUPART_API int libsmctrl_get_gpc_info_ext(uint32_t* num_enabled_gpcs, uint128_t** tpcs_for_gpc, int dev) {
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_enabled_gpcs, tpcs_for_gpc, dev, &map);
    if (error != 0) return error;
    pthread_mutex_lock(&g_info_lock);
    for (uint32_t g = 0; g < map.gpc_count; ++g) {
        uint128_t bits = 0;
        for (int w = 3; w >= 0; --w) bits = (bits << 32) | map.gpc_tpcs[g][w];
        g_gpcs128[dev][g] = bits;
    }
    pthread_mutex_unlock(&g_info_lock);
    *num_enabled_gpcs = map.gpc_count;
    *tpcs_for_gpc = g_gpcs128[dev];
    return 0;
}

GPUPART_API int libsmctrl_get_tpc_info(uint32_t* num_tpcs, int dev) {
    struct gpupart_gpcs_file map;
    const int error = map_of(__func__, num_tpcs, num_tpcs, dev, &map);
    if (error != 0) return error;
    *num_tpcs = map.tpc_count;
    return 0;
}

GPUPART_API int libsmctrl_get_tpc_info_cuda(uint32_t* num_tpcs, int cuda_dev) {
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

/* ---- Real TPCs for the mask setters' check ------------------------------------------------------ */

static int real_from_control(const struct gpupart_gpu_uuid* uuid, uint32_t real[4]) {
    struct gpupart_control control;
    if (gpupart_control_read(&gpupart_shim_slot()->control, &control, 8) != 0) return 0;
    const int index = gpupart_control_find(&control.current, uuid);
    if (index < 0 || !gpupart_control_has_real_tpc(&control.current.gpus[index])) return 0;
    memcpy(real, control.current.gpus[index].real_tpcs, 4 * sizeof(uint32_t));
    return 1;
}

int gpupart_api_real_tpcs(int ordinal, uint32_t real[4], char* uuid_text) {
    if (ordinal < 0 || ordinal >= GPUPART_MAX_ORDINALS) return 0;
    pthread_mutex_lock(&g_info_lock);
    unsigned char bytes[16];
    if (!g_real_cache[ordinal].checked && gpupart_cu.device_get_uuid != NULL && gpupart_cu.device_get_uuid(bytes, ordinal) == 0) {
        struct gpupart_gpu_uuid uuid;
        struct gpupart_gpcs_file map;
        uint32_t found[4];
        gpupart_uuid_from_bytes(bytes, &uuid);
        g_real_cache[ordinal].checked = 1;
        if (gpupart_devices_known_real(&uuid, found) || real_from_control(&uuid, found)) remember_real(ordinal, &uuid, found);
        else if (read_map(NULL, ordinal, &uuid, &map) == 0) remember_real(ordinal, &uuid, map.real_tpcs);
    }
    const int known = g_real_cache[ordinal].known;
    if (known) {
        memcpy(real, g_real_cache[ordinal].real, 4 * sizeof(uint32_t));
        memcpy(uuid_text, g_real_cache[ordinal].uuid, GPUPART_UUID_TEXT_BYTES);
    }
    pthread_mutex_unlock(&g_info_lock);
    return known;
}
