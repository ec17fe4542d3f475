/*
 * Opening and reading SMLP component files (smlp_layout.h) safely: the same checks for the processes that
 * lock (libgpupart/smlp_api.c) and for readers that only look (front ends). libc only.
 */
#ifndef GPUPART_SMLP_COMPONENT_FILE_H
#define GPUPART_SMLP_COMPONENT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "smlp_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens `path` (read-write with `writable`) without following a link and without blocking (a FIFO in its
 * place cannot hang the open), and only if it is a regular file of exactly sizeof(struct
 * gpupart_smlp_file) bytes, owned by `uid`, writable by nobody else (but its group when
 * `group_may_write`: the admin group of a setgid registry). Returns the descriptor (O_CLOEXEC, blocking
 * again), or -errno with one line in `why`: -ENOENT, -ELOOP (a link), -EINVAL (not a regular file),
 * -EPERM (owner, mode), -EPROTO (size). */
int gpupart_smlp_file_open(const char* path, int writable, uint32_t uid, int group_may_write, char* why,
                           size_t why_size);

/* A consistent copy of an open component file through pread, retried while its `seq` is odd or moves
 * (registry_seqlock.h), then validated (smlp_core.h). 0; -EAGAIN when no stable copy was seen in `tries`
 * (a locker is busy or died mid-change: `copy` holds the last, torn read, whose header alone is
 * checked and was valid); -EPROTO (not a valid component file) or -EIO, each with one line in `why`. */
int gpupart_smlp_file_read(int fd, struct gpupart_smlp_file* copy, int tries, char* why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SMLP_COMPONENT_FILE_H */
