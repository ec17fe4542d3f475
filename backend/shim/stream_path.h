/*
 * Eager launches confined through the driver's own per-stream TPC mask (stream_path.c; docs/launch-path.md).
 *
 * Why: once a process subscribes to the driver's tools-callback table, its launches from several threads
 * are serialised (8 threads: 172k launches/s instead of 798k on an H200), whatever is enabled. The driver
 * keeps a TPC mask in each stream object, and a kernel launched on that stream runs on those TPCs alone,
 * with no callback. `gpupart probe` verifies where the field is on the GPU and driver it runs on; `gpupart
 * run` passes the verdict and the GPU's TPC numbering in GPUPART_STREAM_MASK:
 *     <GPU uuid>=<offset hex>,<driver version>,<descriptor version hex>,<bit_of_tpc: 256 hex digits>
 * The shim then writes each stream it sees created with the process's mask, and rewrites it before the
 * next launch on it after a change. Launches it cannot confine this way (the default streams, streams it
 * did not see created, graphs, captures, any launch entry it does not wrap) first subscribe the callback
 * path, once, for the rest of the process (entry_points.c decides which).
 */
#ifndef GPUPART_STREAM_PATH_H
#define GPUPART_STREAM_PATH_H

#include <stdint.h>

#include "registry_layout.h"

/* Tests only: the file naming the running driver's version, instead of /proc/driver/nvidia/version (the
 * test double of the driver has none). */
#define GPUPART_ENV_DRIVER_VERSION_FILE "GPUPART_DRIVER_VERSION_FILE"

/* Reads GPUPART_STREAM_MASK (setup, once): 1 when the stream path may be used (a well-formed value whose
 * driver version is the running driver's), else 0 with one line on stderr when the value was malformed. */
int gpupart_stream_path_setup(void);

/* Nonzero after a successful setup. */
int gpupart_stream_path_on(void);

/* A stream the program just created (its handle), on the GPU of the calling thread's current context:
 * remembered and written with the process's mask. Unknown GPU or a full table: not remembered (launches
 * on it go the callback path). */
void gpupart_stream_path_created(uint64_t stream);

/* The program is destroying `stream`: forgotten, so a new stream at its address is not taken for it. */
void gpupart_stream_path_destroyed(uint64_t stream);

struct gpupart_stream_entry;

/* Launch path, before a launch on `stream`: the stream's entry with its mask up to date (the launch must
 * be followed by gpupart_stream_path_after_launch), or NULL when the stream path does not confine this
 * launch (the caller then makes sure the callback path does). */
struct gpupart_stream_entry* gpupart_stream_path_before_launch(uint64_t stream);
void gpupart_stream_path_after_launch(struct gpupart_stream_entry* entry);

/* In a forked child: nothing of the parent's streams is valid there. */
void gpupart_stream_path_after_fork(void);

#endif /* GPUPART_STREAM_PATH_H */
