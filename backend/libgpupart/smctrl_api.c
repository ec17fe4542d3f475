/*
 * The libsmctrl API of libgpupart.so (and of the preloaded shim, built from the same sources): the mask
 * setters, make_mask and the per-thread error message. Public header: public/gpupart/libsmctrl.h.
 * Every call checks its arguments and changes nothing when one is bad; nothing here aborts the program.
 * The masks go to shim/app_mask_state.c, which the launch path reads; GPU information is smctrl_info.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app_mask_state.h"
#include "gpupart/libsmctrl.h"
#include "launch_stream.h"
#include "shim_core.h"
#include "shim_devices.h"
#include "smctrl_common.h"

static __thread char t_error[320];

GPUPART_API const char* gpupart_last_error(void) { return t_error; }

int gpupart_api_fail(int code, const char* call, const char* format, ...) {
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    snprintf(t_error, sizeof t_error, "libgpupart: %s: %s", call, message);
    for (char* c = t_error; *c != '\0'; ++c)
        if (*c == '\n') *c = ' '; /* one line, whatever dlerror() said */
    return code;
}

int gpupart_api_begin(const char* call, int setup) {
    t_error[0] = '\0';
    if (!gpupart_shim_is_active_copy()) /* reached only through dlsym on this copy's handle */
        return gpupart_api_fail(EBUSY, call, "this copy of libgpupart is inactive: the copy loaded first (the preloaded "
                                "shim) serves the process; call the API through the names the linker resolved");
    if (!setup) return 0;
    char why[240];
    const int error = gpupart_shim_setup_for_api(why, sizeof why);
    if (error != 0) return gpupart_api_fail(error, call, "%s", why);
    gpupart_launch_stream_start(); /* from now on each launch call says its stream */
    gpupart_app_mark_in_use();
    return 0;
}

void gpupart_api_mask_text(const uint32_t words[4], char out[40]) {
    int top = 3;
    while (top > 0 && words[top] == 0) --top;
    int n = snprintf(out, 40, "0x%x", words[top]);
    for (int i = top - 1; i >= 0 && n > 0 && n < 40; --i) n += snprintf(out + n, (size_t)(40 - n), "%08x", words[i]);
}

/* ---- Masks -------------------------------------------------------------------------------------- */

/* Decision 3, as libsmctrl does it: a 64-bit mask names TPCs 0-63, and TPCs 64-127 stay disabled (libsmctrl's
 * 64-bit stream mask disables them, and its global and next masks disable the descriptor's upper half). */
static void from_64(uint64_t mask, uint32_t disable[4]) {
    disable[0] = (uint32_t)mask;
    disable[1] = (uint32_t)(mask >> 32);
    disable[2] = disable[3] = ~0u;
}

static void from_128(uint128_t mask, uint32_t disable[4]) {
    for (int i = 0; i < 4; ++i) disable[i] = (uint32_t)(mask >> (32 * i));
}

/* Whether a mask may be set: the driver lets masks through, it allows some TPC, the GPU of the current
 * context (device 0 while the thread has none) has a GPC map to translate TPC numbers into descriptor bits,
 * and the mask allows one of its TPCs. Otherwise an error. Reads the other GPUs' maps too, for launches there. */
static int check_mask(const char* call, const uint32_t disable[4]) {
    char text[40];
    gpupart_api_mask_text(disable, text);
    if (!gpupart_shim_launch_callback_ok())
        return gpupart_api_fail(ENOTSUP, call, "the CUDA driver refused gpupart's launch callback: no mask can be applied "
                                "in this process");
    if ((~disable[0] | ~disable[1] | ~disable[2] | ~disable[3]) == 0)
        return gpupart_api_fail(EINVAL, call, "mask %s disables every TPC: a kernel would never run; nothing changed", text);
    int ordinal = gpupart_devices_current_ordinal();
    if (ordinal < 0) ordinal = 0;
    uint32_t count = 0;
    char uuid[48];
    const int error = gpupart_api_numbering(call, ordinal, &count, uuid);
    gpupart_api_scan_maps(ordinal);
    if (error != 0) return error; /* no map: TPC numbers cannot be translated on that GPU */
    for (uint32_t k = 0; k < count && k < 128u; ++k)
        if ((disable[k / 32u] & (1u << (k % 32u))) == 0) return 0;
    return gpupart_api_fail(EINVAL, call, "mask %s allows none of TPCs 0-%u of %s (CUDA device %d): a kernel would never "
                            "run; nothing changed", text, count - 1, uuid, ordinal);
}

static void set_global(const char* call, const uint32_t disable[4]) {
    if (gpupart_api_begin(call, 1) != 0 || check_mask(call, disable) != 0) return;
    gpupart_app_set_global(disable);
}

static int is_zero(const uint32_t disable[4]) { return (disable[0] | disable[1] | disable[2] | disable[3]) == 0; }

/* As in libsmctrl, where a zero stream or next mask is no mask at all (its launch hook applies the global
 * mask when the stream left the descriptor's mask zero, and a next mask only when it is not zero): a zero
 * _ext stream mask removes the stream's mask, a zero next mask (either form) cancels the thread's pending one. */
static void set_stream(const char* call, void* stream, const uint32_t disable[4]) {
    if (gpupart_api_begin(call, 1) != 0) return;
    if (is_zero(disable)) {
        gpupart_app_forget_stream((uint64_t)(uintptr_t)stream);
        return;
    }
    if (check_mask(call, disable) != 0) return;
    if (!gpupart_launch_streams_followed()) {
        gpupart_api_fail(ENOTSUP, call, "the CUDA driver does not tell gpupart which stream a launch is on: stream masks "
                         "cannot be applied (use the global or next mask)");
        return;
    }
    if (gpupart_app_set_stream((uint64_t)(uintptr_t)stream, disable) != 0)
        gpupart_api_fail(ENOSPC, call, "%u streams have masks already: destroy streams you no longer use; nothing changed",
                         GPUPART_APP_STREAM_LIMIT);
}

static void set_next(const char* call, const uint32_t disable[4], int zero) {
    if (gpupart_api_begin(call, 1) != 0) return;
    if (zero) {
        gpupart_app_clear_next();
        return;
    }
    if (check_mask(call, disable) != 0) return;
    gpupart_app_set_next(disable);
}

GPUPART_API void libsmctrl_set_global_mask(uint64_t mask) {
    uint32_t disable[4];
    from_64(mask, disable);
    set_global(__func__, disable);
}

GPUPART_API void libsmctrl_set_global_mask_ext(uint128_t mask) {
    uint32_t disable[4];
    from_128(mask, disable);
    set_global(__func__, disable);
}

GPUPART_API void libsmctrl_set_stream_mask(void* stream, uint64_t mask) {
    uint32_t disable[4];
    from_64(mask, disable);
    set_stream(__func__, stream, disable);
}

GPUPART_API void libsmctrl_set_stream_mask_ext(void* stream, uint128_t mask) {
    uint32_t disable[4];
    from_128(mask, disable);
    set_stream(__func__, stream, disable);
}

GPUPART_API void libsmctrl_set_next_mask(uint64_t mask) {
    uint32_t disable[4];
    from_64(mask, disable);
    set_next(__func__, disable, mask == 0);
}

GPUPART_API void libsmctrl_set_next_mask_ext(uint128_t mask) {
    uint32_t disable[4];
    from_128(mask, disable);
    set_next(__func__, disable, mask == 0);
}

/* ---- make_mask ---------------------------------------------------------------------------------- */

GPUPART_API int libsmctrl_make_mask(uint64_t* mask, uint32_t low, uint32_t high_exclusive) {
    const int error = gpupart_api_begin(__func__, 0);
    if (error != 0) return error;
    if (mask == NULL) return gpupart_api_fail(EINVAL, __func__, "mask is NULL");
    if (low >= high_exclusive || high_exclusive > 64)
        return gpupart_api_fail(EINVAL, __func__, "TPCs %u to %u: need low < high_exclusive <= 64", low, high_exclusive);
    const uint64_t width = high_exclusive - low;
    const uint64_t allowed = (width == 64 ? ~0ull : ((1ull << width) - 1)) << low;
    *mask = ~allowed;
    return 0;
}

GPUPART_API int libsmctrl_make_mask_ext(uint128_t* mask, uint32_t low, uint32_t high_exclusive) {
    const int error = gpupart_api_begin(__func__, 0);
    if (error != 0) return error;
    if (mask == NULL) return gpupart_api_fail(EINVAL, __func__, "mask is NULL");
    if (low >= high_exclusive || high_exclusive > 128)
        return gpupart_api_fail(EINVAL, __func__, "TPCs %u to %u: need low < high_exclusive <= 128", low, high_exclusive);
    const uint32_t width = high_exclusive - low;
    const uint128_t ones = ~(uint128_t)0;
    const uint128_t allowed = (width == 128 ? ones : (((uint128_t)1 << width) - 1)) << low;
    *mask = ~allowed;
    return 0;
}
