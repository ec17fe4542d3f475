/*
 * The registry's directory policy, shared by the shim and the front ends: where the registry root is,
 * whether a root or a user directory may be trusted, and finding or making a user's directory.
 */
#ifndef GPUPART_REGISTRY_DIRS_H
#define GPUPART_REGISTRY_DIRS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The registry root: $GPUPART_REGISTRY_DIR, else /run/gpupart if it exists, else /dev/shm (registry_layout.h).
 * Writes at most `size` bytes including the NUL; returns 0 or -ENAMETOOLONG. */
int gpupart_registry_dir(char* out, size_t size);

/* The name prefix of user directories under `root`: "gpupart-u" in /dev/shm, else "u". */
const char* gpupart_user_dir_prefix(const char* root);

/* Whether `root` may be used as a registry root: a real directory (not a symlink), owned by root or by
 * this process's effective user, sticky if others may write it. With `create`, a missing root is made
 * (mode 01777). 0, or -errno with one line (no trailing newline) in `why`: -ENOENT missing, -ENOTDIR not
 * a directory, -ELOOP a symlink, -EPERM owned by another user or writable without the sticky bit. */
int gpupart_registry_root_check(const char* root, int create, char* why, size_t why_size);

/* Whether the entry `name` of `root` is a user directory to trust: named "<prefix><uid>" or
 * "<prefix><uid>.<anything>", a real directory owned by <uid>, writable by nobody else (but the group of
 * a setgid root, if it is setgid with the same group). Fills *uid. 0, -ENOENT (not a user directory's
 * name), or -EPERM with one line in `why`. */
int gpupart_user_dir_check(const char* root, const char* name, uint32_t* uid, char* why, size_t why_size);

/* The directory of user `uid` under `root` ("<root>/<prefix><uid>", or its ".<random>" twin when another
 * user holds that name). With `create`, makes it (mode 0755, or 02775 under a setgid root) if there is
 * none. 0, -ENOENT (none and not `create`), or -errno. */
int gpupart_user_dir(const char* root, uint32_t uid, int create, char* out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_REGISTRY_DIRS_H */
