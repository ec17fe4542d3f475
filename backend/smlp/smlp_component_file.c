#define _GNU_SOURCE
#include "smlp_component_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smlp_core.h"

int gpupart_smlp_file_open(const char* path, int writable, uint32_t uid, int group_may_write, char* why,
                           size_t why_size) {
    const int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        const int error = errno;
        if (error == ELOOP) snprintf(why, why_size, "%s is a symbolic link: refused", path);
        else if (error == ENOENT) snprintf(why, why_size, "%s does not exist", path);
        else snprintf(why, why_size, "cannot open %s (%s)", path, strerror(error));
        return -error;
    }
    struct stat info;
    int error = 0;
    if (fstat(fd, &info) != 0) {
        error = -errno;
        snprintf(why, why_size, "cannot examine %s (%s)", path, strerror(-error));
    } else if (!S_ISREG(info.st_mode)) {
        error = -EINVAL;
        snprintf(why, why_size, "%s is not a regular file: refused", path);
    } else if (info.st_uid != uid) {
        error = -EPERM;
        snprintf(why, why_size, "%s belongs to uid %u, not %u: refused", path, (unsigned)info.st_uid, (unsigned)uid);
    } else if ((info.st_mode & S_IWOTH) != 0 || ((info.st_mode & S_IWGRP) != 0 && !group_may_write)) {
        error = -EPERM;
        snprintf(why, why_size, "%s is writable by others (mode %o): refused", path, (unsigned)(info.st_mode & 07777));
    } else if (info.st_size != (off_t)sizeof(struct gpupart_smlp_file)) {
        error = -EPROTO;
        snprintf(why, why_size, "%s is %lld bytes, not the %zu of an SMLP component: refused", path,
                 (long long)info.st_size, sizeof(struct gpupart_smlp_file));
    } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        error = -errno;
        snprintf(why, why_size, "cannot use %s (%s)", path, strerror(-error));
    }
    if (error != 0) {
        close(fd);
        return error;
    }
    return fd;
}

static int read_all(int fd, void* buffer, size_t size, off_t offset) {
    const ssize_t n = pread(fd, buffer, size, offset);
    return n == (ssize_t)size ? 0 : -EIO;
}

int gpupart_smlp_file_read(int fd, struct gpupart_smlp_file* copy, int tries, char* why, size_t why_size) {
    const off_t seq_offset = (off_t)__builtin_offsetof(struct gpupart_smlp_component, seq);
    for (int attempt = 0; attempt < tries; ++attempt) {
        uint32_t before;
        uint32_t after;
        if (read_all(fd, &before, sizeof before, seq_offset) != 0 || read_all(fd, copy, sizeof *copy, 0) != 0 ||
            read_all(fd, &after, sizeof after, seq_offset) != 0) {
            snprintf(why, why_size, "the component file could not be read whole (truncated?)");
            return -EIO;
        }
        if ((before & 1u) == 0 && before == after && copy->header.seq == before)
            return gpupart_smlp_core_validate(copy, why, why_size);
        if (attempt + 1 < tries) sched_yield(); /* a locker is changing it: its change takes microseconds */
    }
    const int error = gpupart_smlp_core_validate_header(copy, why, why_size);
    if (error != 0) return error;
    snprintf(why, why_size, "the component is being changed (or its last locker died mid-change)");
    return -EAGAIN;
}
