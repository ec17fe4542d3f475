/*
 * libgpupart: the libsmctrl API (same names, same signatures) for programs that partition their own
 * kernels, served by gpupart's launch path. Link with -lgpupart; docs/api.md is the guide.
 *
 * Masks are libsmctrl's DISABLE masks: a set bit is a TPC the kernel must not use. Bit k is TPC number k in
 * libsmctrl's numbering, the driver's own: TPC k holds SMs 2k and 2k+1 (as %smid counts them), numbered 0 to
 * N-1 without gaps. libgpupart translates masks into the launch descriptor's bits through the GPU's GPC map
 * (`gpupart gpcs --write`); without one a setter fails (ENODATA) and changes nothing. As in libsmctrl, the
 * 64-bit forms name TPCs 0-63 and leave TPCs 64-127 disabled (use the _ext forms above TPC 63:
 * set_global_mask_ext(0) allows every TPC), a zero _ext stream mask removes the stream's mask and a zero
 * next mask cancels the pending one.
 *
 * Which mask a launch gets: the calling thread's next mask (used once), else the mask of the launch's
 * stream, else the global mask, else none. Under `gpupart run` or after `gpupart set`, an operator's mask
 * bounds the process: the kernel runs on the TPCs both allow, and when those hold no TPC of the GPU it
 * runs on the operator's TPCs alone (counted; never outside the operator's bound).
 *
 * Errors: calls returning int return 0 or an errno value (EINVAL bad argument, ENODEV no such device,
 * ENODATA no GPC map, ...); every call, void ones included, leaves a one-line message for this thread in
 * gpupart_last_error() when it fails (and "" when it succeeds). A failed call changes nothing but its
 * zeroed outputs, and no call ever aborts the program.
 * `dev` is the CUDA device ordinal (libsmctrl's get_gpc_info took nvdebug's index; gpupart needs no
 * kernel module).
 */
#ifndef GPUPART_LIBSMCTRL_H
#define GPUPART_LIBSMCTRL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef GPUPART_UINT128_T
#define GPUPART_UINT128_T
/* As libsmctrl's header names it (a repeated identical typedef is valid C11 and C++). */
__extension__ typedef unsigned __int128 uint128_t;
#endif

/* ---- libsmctrl's API --------------------------------------------------------------------------- */

/* Default mask for every kernel of the process (streams and next masks override it). */
void libsmctrl_set_global_mask(uint64_t mask);
/* Mask for kernels launched into `stream` (a cudaStream_t / CUstream; NULL is the legacy default
 * stream). Overrides the global mask; forgotten when the stream is destroyed. */
void libsmctrl_set_stream_mask(void* stream, uint64_t mask);
void libsmctrl_set_stream_mask_ext(void* stream, uint128_t mask);
/* Mask for the next kernel this thread launches, once. Overrides the stream and global masks. */
void libsmctrl_set_next_mask(uint64_t mask);

/* The GPCs of CUDA device `dev` with at least one TPC, and a GPC-indexed array of their TPCs (masks of TPC
 * numbers: disjoint, together 0..N-1). The array stays valid until the next call for that device. Needs the
 * GPU's GPC map (ENODATA names the gpupart command that writes it); ERANGE when the GPU has more than 64
 * TPCs (use the _ext form); ENODEV for a device the process does not have. Like libsmctrl, the information
 * calls set their outputs to 0 (and NULL) first: after a failure they hold nothing else. */
int libsmctrl_get_gpc_info(uint32_t* num_enabled_gpcs, uint64_t** tpcs_for_gpc, int dev);
/* The TPCs of CUDA device `dev`, from its GPC map. */
int libsmctrl_get_tpc_info(uint32_t* num_tpcs, int dev);
/* The same without a GPC map: from the driver's SM count (2 SMs per TPC from Volta on, and on the P100). */
int libsmctrl_get_tpc_info_cuda(uint32_t* num_tpcs, int cuda_dev);

/* ---- gpupart's additions ------------------------------------------------------------------------ */

void libsmctrl_set_global_mask_ext(uint128_t mask);
void libsmctrl_set_next_mask_ext(uint128_t mask);
int libsmctrl_get_gpc_info_ext(uint32_t* num_enabled_gpcs, uint128_t** tpcs_for_gpc, int dev);

/* The DISABLE mask that allows TPCs low .. high_exclusive-1 only: libsmctrl_set_global_mask(m) after
 * make_mask(&m, 0, 8) runs kernels on TPCs 0-7. EINVAL unless low < high_exclusive <= 64 (128). */
int libsmctrl_make_mask(uint64_t* mask, uint32_t low, uint32_t high_exclusive);
int libsmctrl_make_mask_ext(uint128_t* mask, uint32_t low, uint32_t high_exclusive);

/* This thread's message for its last libgpupart call: one line saying what failed and what to do, or ""
 * when that call succeeded. Valid until the thread's next call. */
const char* gpupart_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_LIBSMCTRL_H */
