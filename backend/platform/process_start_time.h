/*
 * When a process started, from /proc/PID/stat: pid plus start time names a process for its whole life.
 * C, libc only: the preloaded shim (registry slot names) and the backend (platform/process_identity.hpp)
 * share this one reader, so the two can never disagree about a process's identity.
 */
#ifndef GPUPART_PROCESS_START_TIME_H
#define GPUPART_PROCESS_START_TIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 if the process does not exist. */
uint64_t gpupart_process_start_time(int pid);

/* Whether the process named by pid + start time still runs: 1 yes; 0 no (no such pid, another process
 * under that pid, or exited and not yet reaped: a zombie); -errno when /proc could not tell (anything but
 * "no such process": the caller must not take the process for dead). */
int gpupart_process_running(int pid, uint64_t start_time);

#ifdef __cplusplus
}
#endif

#endif
