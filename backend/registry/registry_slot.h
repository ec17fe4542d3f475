/*
 * Creating, reading and publishing slot files: the C half of the registry, compiled into both the shim
 * and the backend, so the two can never disagree about the protocol. Depends only on libc and the
 * layout. Nothing here is called on the shim's launch path except the inline seqlock helpers.
 */
#ifndef GPUPART_REGISTRY_SLOT_H
#define GPUPART_REGISTRY_SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The registry directory: $GPUPART_REGISTRY_DIR, else /run/gpupart if it exists, else /dev/shm/gpupart.
 * Writes at most `size` bytes including the NUL; returns 0 or -ENAMETOOLONG. */
int gpupart_registry_dir(char* out, size_t size);

/* Creates the directory (mode 01777: anyone may add a slot, nobody may remove another's) if missing. */
int gpupart_registry_dir_ensure(const char* dir);

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 if the process does not exist. */
uint64_t gpupart_process_start_time(int pid);

/* Creates "<dir>/<pid>-<start time>.slot" fully formed (written under a temporary name, then renamed),
 * with `initial` as its control block, and maps it. Returns 0 or -errno. */
int gpupart_slot_create(const char* dir, int pid, uint64_t start_time, uint32_t uid, const char* command,
                        const char* shim_version, const char* start_rule, const struct gpupart_control* initial,
                        struct gpupart_slot_file** mapped, char* path, size_t path_size);

/* Seqlock read of a control block into a private copy; 0, or -EAGAIN if no consistent copy was seen in
 * `tries` attempts (a write is in progress, or a writer died mid-write). Never blocks. */
int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries);

/* Seqlock write of a control block. The caller holds the file's OFD write lock. */
void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control* value);

/* Seqlock read/write of the shim's status block; the writer holds status.writer_busy. */
int gpupart_status_read(const struct gpupart_status* status, struct gpupart_status* copy, int tries);
void gpupart_status_write(struct gpupart_status* status, const struct gpupart_status* value);

/* Writes "<dir>/rules-<uid>" whole under an OFD write lock (mode 0644). 0 or -errno. */
int gpupart_rules_write(const char* dir, uint32_t uid, const struct gpupart_rules_file* rules);

/* Reads "<dir>/rules-<uid>" under an OFD read lock into `rules`, if it exists, is owned by `uid`, and
 * has this layout. 0, -ENOENT (no rules), or another -errno. */
int gpupart_rules_read(const char* dir, uint32_t uid, struct gpupart_rules_file* rules);

/* The first rule of `rules` that matches a process (exe = base name of argv[0]); -1 if none. */
int gpupart_rules_match(const struct gpupart_rules_file* rules, const char* exe, const char* cmdline, uint32_t uid);

/* Nonzero if the control block's allowed TPCs include a real one: the rule the shim (and anything that
 * acts like it) applies before adopting a mask, since a kernel allowed only on holes never runs. */
int gpupart_control_has_real_tpc(const struct gpupart_control* control);

/* Parses "0x..." (1..32 hex digits) into four words, lowest first; 0 or -EINVAL. */
int gpupart_parse_hex_mask(const char* text, uint32_t words[4]);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_REGISTRY_SLOT_H */
