/* GPC map files (gpcs_file.h): written whole through a temporary name, read only when trusted. */
#define _GNU_SOURCE
#include "gpcs_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry_slot.h"

int gpupart_gpcs_path(const char* user_dir, const struct gpupart_gpu_uuid* uuid, char* out, size_t size) {
    char text[GPUPART_UUID_TEXT_BYTES];
    gpupart_uuid_format(uuid, text);
    const int written = snprintf(out, size, "%s/%s%s", user_dir, text, GPUPART_GPCS_SUFFIX);
    return written < 0 || (size_t)written >= size ? -ENAMETOOLONG : 0;
}

int gpupart_gpcs_check(const struct gpupart_gpcs_file* map) {
    if (memcmp(map->magic, GPUPART_GPCS_MAGIC, sizeof map->magic) != 0 ||
        map->layout_version != GPUPART_REGISTRY_LAYOUT_VERSION || map->file_size != sizeof *map ||
        gpupart_uuid_is_zero(&map->uuid) || map->gpc_count > GPUPART_MAX_GPCS ||
        memchr(map->source, 0, sizeof map->source) == NULL)
        return -EPROTO;
    uint32_t seen[4] = {0, 0, 0, 0};
    for (uint32_t g = 0; g < map->gpc_count; ++g) {
        uint32_t any = 0;
        for (int w = 0; w < 4; ++w) {
            if ((seen[w] & map->gpc_tpcs[g][w]) != 0) return -EPROTO; /* a TPC in two GPCs */
            seen[w] |= map->gpc_tpcs[g][w];
            any |= map->gpc_tpcs[g][w];
        }
        if (any == 0) return -EPROTO; /* gpc_count counts GPCs with a TPC */
    }
    for (uint32_t g = map->gpc_count; g < GPUPART_MAX_GPCS; ++g)
        for (int w = 0; w < 4; ++w)
            if (map->gpc_tpcs[g][w] != 0) return -EPROTO;
    uint32_t count = 0;
    for (int w = 0; w < 4; ++w) {
        if (seen[w] != map->real_tpcs[w]) return -EPROTO;
        count += (uint32_t)__builtin_popcount(seen[w]);
    }
    if (count != map->tpc_count || count == 0) return -EPROTO;
    /* TPC numbers 0..tpc_count-1 each name a real TPC's bit, no bit twice; none after. */
    uint32_t numbered[4] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < 128u; ++k) {
        const uint32_t bit = map->bit_of_tpc[k];
        if (k >= count) {
            if (bit != GPUPART_GPCS_NO_TPC) return -EPROTO;
            continue;
        }
        if (bit >= 128u || (map->real_tpcs[bit / 32u] & (1u << (bit % 32u))) == 0 || (numbered[bit / 32u] & (1u << (bit % 32u))) != 0)
            return -EPROTO;
        numbered[bit / 32u] |= 1u << (bit % 32u);
    }
    return 0;
}

int gpupart_gpcs_write(const char* user_dir, const struct gpupart_gpcs_file* map) {
    char path[512];
    char temporary[600];
    int error = gpupart_gpcs_check(map);
    if (error == 0) error = gpupart_gpcs_path(user_dir, &map->uuid, path, sizeof path);
    if (error != 0) return error;
    struct stat info;
    if (lstat(path, &info) == 0) {
        if (S_ISLNK(info.st_mode)) return -ELOOP;  /* never replace what a link points at, nor the link */
        if (!S_ISREG(info.st_mode)) return -EINVAL; /* a FIFO, device or directory is not ours to replace */
    } else if (errno != ENOENT) {
        return -errno;
    }
    struct stat directory;
    if (stat(user_dir, &directory) != 0) return -errno;
    const mode_t mode = (directory.st_mode & S_ISGID) != 0 ? 0664 : 0644;
    if (snprintf(temporary, sizeof temporary, "%s.XXXXXX", path) >= (int)sizeof temporary) return -ENAMETOOLONG;
    const int fd = mkostemp(temporary, O_CLOEXEC); /* O_CREAT | O_EXCL with a random name: no link followed */
    if (fd < 0) return -errno;
    if (fchmod(fd, mode) != 0) error = -errno;
    if (error == 0 && write(fd, map, sizeof *map) != (ssize_t)sizeof *map) error = errno ? -errno : -EIO;
    if (close(fd) != 0 && error == 0) error = -errno;
    if (error == 0 && rename(temporary, path) != 0) error = -errno;
    if (error != 0) unlink(temporary);
    return error;
}

int gpupart_gpcs_read(const char* user_dir, uint32_t uid, const struct gpupart_gpu_uuid* uuid, struct gpupart_gpcs_file* map) {
    char path[512];
    const int named = gpupart_gpcs_path(user_dir, uuid, path, sizeof path);
    if (named != 0) return named;
    /* O_NONBLOCK: a FIFO in its place cannot hang the open; O_NOFOLLOW: a link is refused (ELOOP). */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) return -errno;
    struct stat info;
    int error = 0;
    if (fstat(fd, &info) != 0) error = -errno;
    else if (!S_ISREG(info.st_mode)) error = -EINVAL;
    else if (info.st_uid != uid || info.st_size != (off_t)sizeof *map) error = -EPERM; /* not really that user's */
    else if (pread(fd, map, sizeof *map, 0) != (ssize_t)sizeof *map) error = -EIO;
    close(fd);
    if (error != 0) return error;
    if (gpupart_gpcs_check(map) != 0 || !gpupart_uuid_equal(&map->uuid, uuid)) return -EPROTO;
    return 0;
}
