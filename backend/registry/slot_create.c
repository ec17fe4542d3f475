/*
 * Making a slot file and the writers' lock beside it: a slot appears whole under its final name (written
 * under a random temporary name, then renamed), so no reader sees half a header. Declarations:
 * slot_create.h.
 */
#define _GNU_SOURCE
#include "slot_create.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_seqlock.h"
#include "printable_ascii.h"
#include "random_name.h"

static uint64_t realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int gpupart_slot_create(const char* dir, int pid, uint64_t start_time, uint32_t uid, const char* command,
                        const char* shim_version, const char* start_rule, const char* job,
                        const struct gpupart_control_payload* initial, struct gpupart_slot_file** mapped, char* path,
                        size_t path_size) {
    char temporary[512];
    char suffix[7];
    int written = snprintf(path, path_size, "%s/%d-%llu%s", dir, pid, (unsigned long long)start_time, GPUPART_SLOT_SUFFIX);
    if (written < 0 || (size_t)written >= path_size) return -ENAMETOOLONG;
    if (gpupart_random_suffix(suffix) != 0) return -EIO;
    /* A random name: a predictable one could be taken first by someone who may write the directory. */
    written = snprintf(temporary, sizeof temporary, "%s.%s.new", path, suffix);
    if (written < 0 || (size_t)written >= sizeof temporary) return -ENAMETOOLONG;
    struct stat directory;
    if (stat(dir, &directory) != 0) return -errno;
    /* Owner (and, under a setgid registry, its admin group) may write; everybody may read. */
    const mode_t mode = (directory.st_mode & S_ISGID) != 0 ? 0664 : 0644;

    int fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0) return -errno;
    int error = 0;
    void* memory = MAP_FAILED;
    if (fchmod(fd, mode) != 0 || ftruncate(fd, GPUPART_SLOT_FILE_SIZE) != 0) error = -errno;
    if (error == 0) {
        memory = mmap(NULL, GPUPART_SLOT_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (memory == MAP_FAILED) error = -errno;
    }
    close(fd);
    if (error != 0) {
        unlink(temporary);
        return error;
    }
    struct gpupart_slot_file* slot = (struct gpupart_slot_file*)memory;
    memcpy(slot->header.magic, GPUPART_REGISTRY_MAGIC, sizeof slot->header.magic);
    slot->header.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    slot->header.file_size = GPUPART_SLOT_FILE_SIZE;
    slot->header.pid = pid;
    slot->header.uid = uid;
    slot->header.start_time = start_time;
    slot->header.created_realtime_ns = realtime_ns();
    snprintf(slot->header.shim_version, sizeof slot->header.shim_version, "%s", shim_version ? shim_version : "");
    snprintf(slot->command, sizeof slot->command, "%s", command ? command : "");
    snprintf(slot->header.start_rule, sizeof slot->header.start_rule, "%s", start_rule ? start_rule : "");
    gpupart_printable_ascii(job, slot->header.job, sizeof slot->header.job);
    if (initial != NULL) gpupart_control_write(&slot->control, initial);
    __atomic_store_n(&slot->status.state, (uint32_t)GPUPART_SHIM_WAITING, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->header.state, (uint32_t)GPUPART_SLOT_LIVE, __ATOMIC_RELEASE);
    if (rename(temporary, path) != 0) {
        error = -errno;
        munmap(memory, GPUPART_SLOT_FILE_SIZE);
        unlink(temporary);
        return error;
    }
    *mapped = slot;
    /* The writers' lock beside it, so the admin group (who cannot add files here) finds it made. A slot
     * without it still works: its owner's or root's gpupart makes it on the first change. */
    (void)gpupart_writers_lock_make(dir);
    return 0;
}

int gpupart_writers_lock_make(const char* dir) {
    /* Made through a descriptor of the directory itself, never its name twice: in a sticky registry the
     * directory's owner may swap it for a symlink between a check and the create, and root would then make
     * a file the user owns wherever the link points. */
    const int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0) return -errno;
    struct stat directory;
    if (fstat(dirfd, &directory) != 0) {
        const int error = -errno;
        close(dirfd);
        return error;
    }
    /* Nobody but the slots' writers may open it: a reader's lock on it would keep every writer out. */
    const mode_t mode = (directory.st_mode & S_ISGID) != 0 ? 0660 : 0600;
    const int fd = openat(dirfd, GPUPART_WRITERS_LOCK_FILE,
                          O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode);
    if (fd < 0) {
        const int error = errno == EEXIST ? 0 : -errno;
        close(dirfd);
        return error;
    }
    int error = 0;
    /* Root making it for a user: the user's, as everything in the directory (the group comes from a setgid
     * directory by itself). */
    if (geteuid() != directory.st_uid && fchown(fd, directory.st_uid, (gid_t)-1) != 0) error = -errno;
    if (error == 0 && fchmod(fd, mode) != 0) error = -errno;
    close(fd);
    if (error != 0) unlinkat(dirfd, GPUPART_WRITERS_LOCK_FILE, 0);
    close(dirfd);
    return error;
}
