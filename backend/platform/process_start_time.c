#define _GNU_SOURCE
#include "process_start_time.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t gpupart_process_start_time(int pid) {
    char path[64];
    char buffer[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return 0;
    buffer[n] = '\0';
    /* The command name (field 2) may hold spaces and ')': fields resume after the last ')'. */
    char* p = strrchr(buffer, ')');
    if (p == NULL) return 0;
    int field = 2;
    while (*p != '\0' && field < 22) {
        if (*p == ' ') ++field;
        ++p;
    }
    return field == 22 ? strtoull(p, NULL, 10) : 0;
}
