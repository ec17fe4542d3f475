/*
 * GPC map files, "<user dir>/GPU-<uuid>.gpcs" (registry_layout.h, docs/registry-layout-5.md decision 6):
 * which TPC mask bits each GPC of a GPU holds and which bit each TPC number (the driver's: TPC k = SMs 2k and
 * 2k+1) is, for programs that partition themselves through
 * libgpupart.so (libsmctrl_get_gpc_info) and cannot read the GPU's topology. Written by gpupart commands
 * that read the live topology; read by the library. The C half of the registry: libc only, compiled into
 * gpupart_registry_c (the backend) and the shim, so writer and reader share one check of the format.
 */
#ifndef GPUPART_GPCS_FILE_H
#define GPUPART_GPCS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "<user_dir>/GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.gpcs"; 0 or -ENAMETOOLONG. */
int gpupart_gpcs_path(const char* user_dir, const struct gpupart_gpu_uuid* uuid, char* out, size_t size);

/* Whether `map` is a well-formed map: magic, layout version, size, a non-zero UUID, gpc_count <= 32 and
 * every GPC non-empty, GPCs pairwise disjoint, their union real_tpcs, tpc_count its population count,
 * bit_of_tpc a one-to-one map of TPC numbers 0..tpc_count-1 onto real_tpcs, source NUL-terminated. 0 or -EPROTO. Writers check before writing, readers after reading. */
int gpupart_gpcs_check(const struct gpupart_gpcs_file* map);

/* Writes map->uuid's map into `user_dir` whole: a temporary file with a random name (O_EXCL, never
 * through a link), then renamed over the old map, so a reader sees the old map or the new one. Mode 0644,
 * or 0664 when `user_dir` is setgid (an installed registry's admin group). A symlink in the map's place is
 * refused (-ELOOP), and so is a FIFO, device or directory (-EINVAL); a malformed map is -EPROTO.
 * 0 or -errno. */
int gpupart_gpcs_write(const char* user_dir, const struct gpupart_gpcs_file* map);

/* Reads the map of `uuid` from `user_dir` if it is a regular file owned by `uid` (not a link: O_NOFOLLOW;
 * never blocks: a FIFO is -EINVAL), of exactly sizeof(struct gpupart_gpcs_file) bytes, with this magic,
 * layout version and UUID, and well formed (gpupart_gpcs_check). 0, -ENOENT (no map), -EPERM (another
 * owner, wrong size), -EPROTO (not a map of this layout or of this GPU), or another -errno. */
int gpupart_gpcs_read(const char* user_dir, uint32_t uid, const struct gpupart_gpu_uuid* uuid, struct gpupart_gpcs_file* map);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_GPCS_FILE_H */
