#define _GNU_SOURCE
#include "process_start_time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads /proc/PID/stat: the state letter (field 3) and the start time (field 22). 0, or -errno of the
 * open (-ENOENT: no such process) or -EIO (unreadable or malformed). */
static int read_stat(int pid, char* state, uint64_t* start_time) {
    char path[64];
    char buffer[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    const int read_error = errno;
    close(fd);
    /* A process that exits between the open and the read reads as ESRCH: it is gone. */
    if (n < 0) return read_error == ESRCH ? -ENOENT : -EIO;
    if (n == 0) return -EIO;
    buffer[n] = '\0';
    /* The command name (field 2) may hold spaces and ')': fields resume after the last ')'. */
    char* p = strrchr(buffer, ')');
    if (p == NULL || p[1] != ' ' || p[2] == '\0') return -EIO;
    *state = p[2];
    int field = 2;
    while (*p != '\0' && field < 22) {
        if (*p == ' ') ++field;
        ++p;
    }
    if (field != 22) return -EIO;
    *start_time = strtoull(p, NULL, 10);
    return 0;
}

uint64_t gpupart_process_start_time(int pid) {
    char state;
    uint64_t start_time = 0;
    return read_stat(pid, &state, &start_time) == 0 ? start_time : 0;
}

int gpupart_process_running(int pid, uint64_t start_time) {
    char state;
    uint64_t actual = 0;
    if (pid <= 0) return 0;
    const int error = read_stat(pid, &state, &actual);
    if (error == -ENOENT || error == -ESRCH) return 0;
    if (error != 0) return error;
    /* A zombie (Z) or dying (X) process has exited: its memory and GPU contexts are gone, only its parent
     * has not reaped it yet. Another start time: the pid was reused by a later process. */
    if (state == 'Z' || state == 'X' || actual != start_time) return 0;
    return 1;
}
