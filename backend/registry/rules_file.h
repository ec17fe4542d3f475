/*
 * A user's start rules file: writing it whole, reading it safely, matching a starting process.
 */
#ifndef GPUPART_RULES_FILE_H
#define GPUPART_RULES_FILE_H

#include <stdint.h>
#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes "<user_dir>/rules" whole (mode 0644): a temporary file under a random name, renamed over it, so
 * no reader's lock can hold the writer up and no reader sees half a table. Whatever is in its place (a
 * FIFO, a symlink) is replaced, never opened or written through. 0 or -errno. */
int gpupart_rules_write(const char* user_dir, const struct gpupart_rules_file* rules);

/* Reads "<user_dir>/rules" under an OFD read lock (against a writer of the version before, which wrote it
 * in place) into `rules`, if it exists, is a regular file owned by
 * `uid` of the right size, and has this layout. Never blocks (a FIFO is -EINVAL). 0, -ENOENT (no rules),
 * or another -errno. */
int gpupart_rules_read(const char* user_dir, uint32_t uid, struct gpupart_rules_file* rules);

/* The first rule of `rules` that matches a process (exe = base name of argv[0]); -1 if none. */
int gpupart_rules_match(const struct gpupart_rules_file* rules, const char* exe, const char* cmdline, uint32_t uid);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_RULES_FILE_H */
