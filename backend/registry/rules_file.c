/*
 * A user's start rules file ("<user_dir>/rules"): written whole and renamed into place, read under a
 * short OFD read lock, refused when it is not a regular file of its owner, and matched against a starting
 * process by the shim. Declarations: rules_file.h.
 */
#define _GNU_SOURCE
#include "rules_file.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "random_name.h"

static void rules_path(char* out, size_t size, const char* user_dir) {
    snprintf(out, size, "%s/%s", user_dir, GPUPART_RULES_FILE);
}

/* Takes an OFD lock of `type`, retrying for up to a second: never blocks for long. */
static int lock_file(int fd, short type) {
    struct flock request;
    memset(&request, 0, sizeof request);
    request.l_type = type;
    request.l_whence = SEEK_SET;
    for (int attempt = 0; attempt < 500; ++attempt) {
        if (fcntl(fd, F_OFD_SETLK, &request) == 0) return 0;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) return -errno;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    return -EAGAIN;
}

/* Opens a rules file without blocking (a FIFO in its place cannot hang the open) and only if it is a
 * regular file; O_NONBLOCK is cleared again. -EINVAL for anything else. */
static int open_rules(const char* path, int flags, struct stat* info) {
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) return -errno;
    if (fstat(fd, info) != 0 || !S_ISREG(info->st_mode)) {
        close(fd);
        return -EINVAL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int gpupart_rules_write(const char* user_dir, const struct gpupart_rules_file* rules) {
    /* Written whole under a random name, then renamed over "rules": readers see the old table or the new
     * one, and no lock is taken, so nobody who can only read the table can hold its writers up. */
    char path[512];
    char temporary[512];
    char suffix[7];
    rules_path(path, sizeof path, user_dir);
    if (gpupart_random_suffix(suffix) != 0) return -EIO;
    if (snprintf(temporary, sizeof temporary, "%s/.%s.%s.new", user_dir, GPUPART_RULES_FILE, suffix) >= (int)sizeof temporary)
        return -ENAMETOOLONG;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) return -errno;
    int error = 0;
    if (fchmod(fd, 0644) != 0) error = -errno;
    if (error == 0 && pwrite(fd, rules, sizeof *rules, 0) != (ssize_t)sizeof *rules) error = errno ? -errno : -EIO;
    if (close(fd) != 0 && error == 0) error = -errno;
    if (error == 0 && rename(temporary, path) != 0) error = -errno;
    if (error != 0) unlink(temporary);
    return error;
}

int gpupart_rules_read(const char* user_dir, uint32_t uid, struct gpupart_rules_file* rules) {
    char path[512];
    struct stat info;
    rules_path(path, sizeof path, user_dir);
    int fd = open_rules(path, O_RDONLY, &info);
    if (fd < 0) return fd;
    int error = 0;
    if (info.st_uid != uid || info.st_size != (off_t)sizeof *rules) error = -EPERM; /* not really that user's */
    if (error == 0) error = lock_file(fd, F_RDLCK);
    if (error == 0 && pread(fd, rules, sizeof *rules, 0) != (ssize_t)sizeof *rules) error = -EIO;
    close(fd);
    if (error != 0) return error;
    if (memcmp(rules->magic, GPUPART_RULES_MAGIC, sizeof rules->magic) != 0 ||
        rules->layout_version != GPUPART_REGISTRY_LAYOUT_VERSION || rules->count > GPUPART_RULES_MAX)
        return -EPROTO;
    return 0;
}

int gpupart_rules_match(const struct gpupart_rules_file* rules, const char* exe, const char* cmdline, uint32_t uid) {
    for (uint32_t i = 0; i < rules->count && i < GPUPART_RULES_MAX; ++i) {
        const struct gpupart_rule* rule = &rules->rules[i];
        if (rule->match == 0 || memchr(rule->exe, 0, sizeof rule->exe) == NULL ||
            memchr(rule->cmdline, 0, sizeof rule->cmdline) == NULL)
            continue; /* malformed: never matched */
        if ((rule->match & GPUPART_RULE_MATCH_UID) && rule->uid != uid) continue;
        if ((rule->match & GPUPART_RULE_MATCH_EXE) && strncmp(rule->exe, exe, sizeof rule->exe) != 0) continue;
        if ((rule->match & GPUPART_RULE_MATCH_CMDLINE) && fnmatch(rule->cmdline, cmdline, 0) != 0) continue;
        return (int)i;
    }
    return -1;
}
