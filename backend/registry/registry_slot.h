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

/* The registry root: $GPUPART_REGISTRY_DIR, else /run/gpupart if it exists, else /dev/shm (registry_layout.h).
 * Writes at most `size` bytes including the NUL; returns 0 or -ENAMETOOLONG. */
int gpupart_registry_dir(char* out, size_t size);

/* The name prefix of user directories under `root`: "gpupart-u" in /dev/shm, else "u". */
const char* gpupart_user_dir_prefix(const char* root);

/* Whether `root` may be used as a registry root: a real directory (not a symlink), owned by root or by
 * this process's effective user, sticky if others may write it. With `create`, a missing root is made
 * (mode 01777). 0, or -errno with one line (no trailing newline) in `why`: -ENOENT missing, -ENOTDIR not
 * a directory, -ELOOP a symlink, -EPERM owned by another user or writable without the sticky bit. */
int gpupart_registry_root_check(const char* root, int create, char* why, size_t why_size);

/* Whether the entry `name` of `root` is a user directory to trust: named "<prefix><uid>" or
 * "<prefix><uid>.<anything>", a real directory owned by <uid>, writable by nobody else (but the group of
 * a setgid root, if it is setgid with the same group). Fills *uid. 0, -ENOENT (not a user directory's
 * name), or -EPERM with one line in `why`. */
int gpupart_user_dir_check(const char* root, const char* name, uint32_t* uid, char* why, size_t why_size);

/* The directory of user `uid` under `root` ("<root>/<prefix><uid>", or its ".<random>" twin when another
 * user holds that name). With `create`, makes it (mode 0755, or 02775 under a setgid root) if there is
 * none. 0, -ENOENT (none and not `create`), or -errno. */
int gpupart_user_dir(const char* root, uint32_t uid, int create, char* out, size_t out_size);

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

/* Copies the printable ASCII characters (0x20-0x7e) of `text` into `out` (NUL-terminated, at most
 * `size` - 1 of them); everything else is dropped. What header.job may hold (registry_layout.h). */
void gpupart_printable_ascii(const char* text, char* out, size_t size);

/* Seqlock read of a control block into a private copy (seq and current; count clamped to GPUPART_MAX_GPUS);
 * 0, or -EAGAIN if no consistent copy was seen in `tries` attempts (a write is in progress, or a writer
 * died mid-write). Never blocks. */
int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries);

/* Seqlock write of a control block through memory (slot creation, the demo worker, tests); front ends
 * write through pwrite (slot_file.cpp) with the same steps. The caller holds the file's OFD write lock.
 * Saves the payload it replaces in `saved` first, and repairs a dead writer's block before that. */
void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control_payload* value);

/* Completes the block a writer killed mid-write left (seq odd) by restoring `saved`. The caller holds
 * the file's OFD write lock, so no live writer is in the middle of it. No-op when seq is even. */
void gpupart_control_repair(struct gpupart_control* control);

/* The index of `uuid`'s entry in a (privately read) payload, or -1. */
int gpupart_control_find(const struct gpupart_control_payload* payload, const struct gpupart_gpu_uuid* uuid);

/* Seqlock read/write of one GPU entry of the shim's status block; the writer holds entry->writer_busy.
 * The write leaves the entry's uuid alone (it is written once, before status.gpu_count covers it). */
int gpupart_status_gpu_read(const struct gpupart_status_gpu* entry, struct gpupart_status_gpu* copy, int tries);
void gpupart_status_gpu_write(struct gpupart_status_gpu* entry, const struct gpupart_status_gpu* value);

/* GPU UUIDs (registry_layout.h). Text is "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML prints it. */
#define GPUPART_UUID_TEXT_BYTES 41
int gpupart_uuid_equal(const struct gpupart_gpu_uuid* a, const struct gpupart_gpu_uuid* b);
int gpupart_uuid_is_zero(const struct gpupart_gpu_uuid* uuid);
void gpupart_uuid_from_bytes(const unsigned char bytes[16], struct gpupart_gpu_uuid* uuid);
void gpupart_uuid_format(const struct gpupart_gpu_uuid* uuid, char out[GPUPART_UUID_TEXT_BYTES]);
/* Parses the 40 characters at `text` (more may follow); returns 40, or -EINVAL. */
int gpupart_uuid_parse(const char* text, struct gpupart_gpu_uuid* uuid);

/* Parses "GPU-<uuid>=0x<mask>[;GPU-<uuid>=0x<mask>...]" (GPUPART_TPCS, GPUPART_REAL_TPCS) into at most
 * `max` entries; returns how many, or -EINVAL (malformed, empty, a GPU named twice, more than `max`). */
int gpupart_parse_gpu_masks(const char* text, struct gpupart_gpu_uuid uuids[], uint32_t masks[][4], int max);

/* Writes "<user_dir>/rules" whole (mode 0644): a temporary file under a random name, renamed over it, so
 * no reader's lock can hold the writer up and no reader sees half a table. Whatever is in its place (a
 * FIFO, a symlink) is replaced, never opened or written through. 0 or -errno. */
int gpupart_rules_write(const char* user_dir, const struct gpupart_rules_file* rules);

/* Makes "<dir>/writers.lock" (mode 0600, 0660 in a setgid directory; owned by the directory's owner) if it
 * is not there: the lock the writers of the directory's slots take (registry_layout.h). 0 or -errno. */
int gpupart_writers_lock_make(const char* dir);

/* Reads "<user_dir>/rules" under an OFD read lock (against a writer of the version before, which wrote it
 * in place) into `rules`, if it exists, is a regular file owned by
 * `uid` of the right size, and has this layout. Never blocks (a FIFO is -EINVAL). 0, -ENOENT (no rules),
 * or another -errno. */
int gpupart_rules_read(const char* user_dir, uint32_t uid, struct gpupart_rules_file* rules);

/* The first rule of `rules` that matches a process (exe = base name of argv[0]); -1 if none. */
int gpupart_rules_match(const struct gpupart_rules_file* rules, const char* exe, const char* cmdline, uint32_t uid);

/* Nonzero if a GPU entry's allowed TPCs include a real one of that GPU: the rule the shim (and anything
 * that acts like it) applies before adopting a mask, since a kernel allowed only on holes never runs. */
int gpupart_control_has_real_tpc(const struct gpupart_control_gpu* control);

/* Parses "0x..." (1..32 hex digits) into four words, lowest first; 0 or -EINVAL. */
int gpupart_parse_hex_mask(const char* text, uint32_t words[4]);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_REGISTRY_SLOT_H */
