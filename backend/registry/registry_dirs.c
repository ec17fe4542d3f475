/*
 * Where the registry lives and which of its user directories to trust: the directory policy the shim and
 * every front end must apply alike (a squatted or writable directory is never used), so it is one C file
 * compiled into both. Declarations: registry_dirs.h.
 */
#define _GNU_SOURCE
#include "registry_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "random_name.h"
#include "registry_layout.h"

int gpupart_registry_dir(char* out, size_t size) {
    const char* chosen = getenv(GPUPART_ENV_REGISTRY_DIR);
    struct stat info;
    if (chosen == NULL || chosen[0] == '\0')
        chosen = (lstat("/run/gpupart", &info) == 0 && S_ISDIR(info.st_mode)) ? "/run/gpupart" : GPUPART_SHM_ROOT;
    if (strlen(chosen) + 1 > size) return -ENAMETOOLONG;
    memcpy(out, chosen, strlen(chosen) + 1);
    return 0;
}

const char* gpupart_user_dir_prefix(const char* root) {
    /* /dev/shm is everybody's: our directories there carry the product's name. */
    return strcmp(root, GPUPART_SHM_ROOT) == 0 ? GPUPART_SHM_USER_DIR_PREFIX : GPUPART_USER_DIR_PREFIX;
}

static void say(char* why, size_t why_size, const char* format, const char* path, unsigned long a, unsigned long b) {
    if (why != NULL && why_size > 0) snprintf(why, why_size, format, path, a, b);
}

int gpupart_registry_root_check(const char* root, int create, char* why, size_t why_size) {
    struct stat info;
    if (lstat(root, &info) != 0) {
        const int error = errno;
        if (error == ENOENT && create) {
            if (mkdir(root, 01777) != 0 && errno != EEXIST) {
                say(why, why_size, "registry %s: cannot create it (%lu)", root, (unsigned long)errno, 0);
                return -errno;
            }
            /* mkdir's mode is filtered by the umask; the sticky, world-writable mode is the point. Only
             * the directory we just made is changed: lstat again and chmod only if it is ours. */
            if (lstat(root, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == geteuid()) chmod(root, 01777);
            return gpupart_registry_root_check(root, 0, why, why_size);
        }
        say(why, why_size, error == ENOENT ? "registry %s does not exist" : "registry %s: cannot examine it", root, 0, 0);
        return -error;
    }
    if (S_ISLNK(info.st_mode)) {
        say(why, why_size, "registry %s is a symbolic link: refused (whoever owns the link chooses where it points)", root, 0, 0);
        return -ELOOP;
    }
    if (!S_ISDIR(info.st_mode)) {
        say(why, why_size, "registry %s is not a directory", root, 0, 0);
        return -ENOTDIR;
    }
    if (info.st_uid != 0 && info.st_uid != geteuid()) {
        say(why, why_size,
            "registry %s belongs to uid %lu, not root or you: its owner can rename or remove what is in it; "
            "ask root to remove it (an installed gpupart uses /run/gpupart)", root, (unsigned long)info.st_uid, 0);
        return -EPERM;
    }
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (info.st_mode & S_ISVTX) == 0) {
        say(why, why_size, "registry %s is writable by others without the sticky bit (mode %lo): anyone could remove "
            "anyone's files; chmod +t it", root, (unsigned long)(info.st_mode & 07777), 0);
        return -EPERM;
    }
    return 0;
}

/* Parses "<prefix><digits>" or "<prefix><digits>.<anything>"; -ENOENT if `name` is not such a name. */
static int user_dir_uid(const char* root, const char* name, uint32_t* uid) {
    const char* prefix = gpupart_user_dir_prefix(root);
    const size_t length = strlen(prefix);
    if (strncmp(name, prefix, length) != 0) return -ENOENT;
    const char* p = name + length;
    if (*p < '0' || *p > '9') return -ENOENT;
    uint64_t value = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
        value = value * 10 + (uint64_t)(*p - '0');
        if (value > UINT32_MAX) return -ENOENT;
    }
    if (*p != '\0' && *p != '.') return -ENOENT;
    if (p - (name + length) > 1 && name[length] == '0') return -ENOENT; /* "u007" is not uid 7's name */
    *uid = (uint32_t)value;
    return 0;
}

int gpupart_user_dir_check(const char* root, const char* name, uint32_t* uid, char* why, size_t why_size) {
    char path[512];
    if (user_dir_uid(root, name, uid) != 0) return -ENOENT;
    if (snprintf(path, sizeof path, "%s/%s", root, name) >= (int)sizeof path) return -ENAMETOOLONG;
    struct stat info;
    struct stat top;
    if (lstat(path, &info) != 0 || lstat(root, &top) != 0) return -errno;
    if (!S_ISDIR(info.st_mode)) {
        say(why, why_size, "%s is not a directory: not a user directory, ignored", path, 0, 0);
        return -EPERM;
    }
    if (info.st_uid != *uid) {
        say(why, why_size, "%s belongs to uid %lu, not to uid %lu its name claims: ignored (squatted)", path,
            (unsigned long)info.st_uid, (unsigned long)*uid);
        return -EPERM;
    }
    const int admin_group = (top.st_mode & S_ISGID) != 0 && (info.st_mode & S_ISGID) != 0 && info.st_gid == top.st_gid;
    if ((info.st_mode & S_IWOTH) != 0 || ((info.st_mode & S_IWGRP) != 0 && !admin_group)) {
        say(why, why_size, "%s is writable by other users (mode %lo): ignored", path, (unsigned long)(info.st_mode & 07777), 0);
        return -EPERM;
    }
    return 0;
}

int gpupart_user_dir(const char* root, uint32_t uid, int create, char* out, size_t out_size) {
    const char* prefix = gpupart_user_dir_prefix(root);
    char name[64];
    snprintf(name, sizeof name, "%s%u", prefix, (unsigned)uid);
    struct stat top;
    if (lstat(root, &top) != 0) return -errno;
    /* Owner writes, all read. Under a setgid root the directory inherits the root's group and setgid bit
     * from mkdir itself, so the slots made in it belong to the admin group (who write the slots, not the
     * directory). */
    const mode_t mode = 0755;
    uint32_t owner;
    for (int attempt = 0; attempt < 8; ++attempt) {
        /* The plain name first; then any twin this user made before (sorted: the same one every time). */
        if (gpupart_user_dir_check(root, name, &owner, NULL, 0) == 0) break;
        int found = 0;
        DIR* listing = opendir(root);
        if (listing != NULL) {
            char best[64] = "";
            const size_t plain = strlen(name);
            struct dirent* entry;
            while ((entry = readdir(listing)) != NULL) {
                if (strncmp(entry->d_name, name, plain) != 0 || entry->d_name[plain] != '.' ||
                    strlen(entry->d_name) >= sizeof best)
                    continue;
                if (gpupart_user_dir_check(root, entry->d_name, &owner, NULL, 0) != 0 || owner != uid) continue;
                if (best[0] == '\0' || strcmp(entry->d_name, best) < 0)
                    memcpy(best, entry->d_name, strlen(entry->d_name) + 1); /* fits: checked above */
            }
            closedir(listing);
            if (best[0] != '\0') {
                memcpy(name, best, sizeof name); /* both 64 bytes */
                found = 1;
            }
        }
        if (found) break;
        if (!create) return -ENOENT;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", root, name);
        if (mkdir(path, mode) == 0 || errno == EEXIST) {
            struct stat made;
            /* mkdir's mode passed through the umask: set it on the directory we made, never through a link,
             * and only when the umask took something away. A chmod by a user outside the directory's group
             * clears its setgid bit (the kernel does), which would cost the admin group its slots. */
            if (lstat(path, &made) == 0 && S_ISDIR(made.st_mode) && made.st_uid == uid && made.st_uid == geteuid() &&
                (made.st_mode & 0777) != mode)
                chmod(path, mode | (made.st_mode & S_ISGID));
            if (gpupart_user_dir_check(root, name, &owner, NULL, 0) == 0) break;
        } else {
            return -errno;
        }
        /* Someone else holds the name: make a twin nobody can predict. */
        char suffix[7];
        if (gpupart_random_suffix(suffix) != 0) return -EIO;
        snprintf(name, sizeof name, "%s%u.%s", prefix, (unsigned)uid, suffix);
    }
    if (gpupart_user_dir_check(root, name, &owner, NULL, 0) != 0) return -EPERM;
    if ((size_t)snprintf(out, out_size, "%s/%s", root, name) >= out_size) return -ENAMETOOLONG;
    return 0;
}
