/*
 * Making slot files (the shim at start, `gpupart run`, the demo worker, tests) and the writers' lock
 * beside them.
 */
#ifndef GPUPART_SLOT_CREATE_H
#define GPUPART_SLOT_CREATE_H

#include <stddef.h>
#include <stdint.h>
#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 if the process does not exist.
 * Defined by the platform layer (platform/process_start_time.c, which declares it the same way); declared
 * here too for the shim and the slot writers, which name slots by pid and start time. */
uint64_t gpupart_process_start_time(int pid);

/* Creates "<user_dir>/<pid>-<start time>.slot" fully formed (written under a random temporary name made
 * with O_EXCL, then renamed), with `initial` as its control block, and maps it. Mode 0644, or 0664 when
 * `user_dir` is setgid (the admin group of an installed registry may write it). `job` (NULL: none) is the
 * scheduler job ($GPUPART_JOB) for header.job: its printable ASCII characters only, at most 63 of them.
 * Returns 0 or -errno. */
int gpupart_slot_create(const char* dir, int pid, uint64_t start_time, uint32_t uid, const char* command,
                        const char* shim_version, const char* start_rule, const char* job,
                        const struct gpupart_control_payload* initial, struct gpupart_slot_file** mapped, char* path,
                        size_t path_size);

/* Makes "<dir>/writers.lock" (mode 0600, 0660 in a setgid directory; owned by the directory's owner) if it
 * is not there: the lock the writers of the directory's slots take (registry_layout.h). 0 or -errno. */
int gpupart_writers_lock_make(const char* dir);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SLOT_CREATE_H */
