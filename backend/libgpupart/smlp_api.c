/*
 * The SMLP's public C API (public/gpupart/smlp.h): component files in the registry (smlp_layout.h),
 * locked changes (smlp_session.c) and the rules (smlp/smlp_core.c). Returns errno values with a
 * thread-local line, never aborts the host program.
 */
#define _GNU_SOURCE
#include "gpupart/smlp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process_start_time.h"
#include "registry_slot.h"
#include "smlp_core.h"
#include "smlp_component_file.h"
#include "smlp_session.h"

const char* smlp_message(void); /* smlp_session.c */

GPUPART_SMLP_API const char* gpupart_smlp_last_error(void) { return smlp_message(); }

static void shape_from_config(const struct gpupart_smlp_config* config, struct gpupart_smlp_shape* shape) {
    memset(shape, 0, sizeof *shape);
    gpupart_uuid_from_bytes(config->gpu_uuid, &shape->gpu);
    memcpy(shape->tpcs, config->tpcs, sizeof shape->tpcs);
    shape->h = config->h;
    shape->fq_length = config->fq_length;
    shape->gpc_count = config->gpc_count;
    const uint32_t gpcs = config->gpc_count <= GPUPART_MAX_GPCS ? config->gpc_count : GPUPART_MAX_GPCS;
    memcpy(shape->gpc_tpcs, config->gpc_tpcs, gpcs * sizeof config->gpc_tpcs[0]);
}

/* The user's directory in the registry (made when `create`), and whether its group may write files in it. */
static int user_directory(int create, char* out, size_t size, int* group_may_write) {
    char root[256];
    char why[300] = "";
    int error = gpupart_registry_dir(root, sizeof root);
    if (error != 0) return smlp_fail(-error, "the registry directory's name is too long");
    /* Only a root named by $GPUPART_REGISTRY_DIR may be made here, as the shim does. */
    error = gpupart_registry_root_check(root, getenv(GPUPART_ENV_REGISTRY_DIR) != NULL, why, sizeof why);
    if (error != 0) return smlp_fail(-error, "%s", why[0] != '\0' ? why : "the registry directory is unusable");
    error = gpupart_user_dir(root, (uint32_t)geteuid(), create, out, size);
    if (error == -ENOENT) return smlp_fail(ENOENT, "no gpupart directory of this user in %s", root);
    if (error != 0) return smlp_fail(-error, "cannot use this user's directory in %s (%s)", root, strerror(-error));
    struct stat info;
    if (stat(out, &info) != 0) return smlp_fail(errno, "cannot examine %s (%s)", out, strerror(errno));
    *group_may_write = (info.st_mode & S_ISGID) != 0;
    return 0;
}

/* Makes the file whole under a random name, then links it to `path`: 0 when ours is the component, EEXIST
 * when another creator's link came first (then that one is joined), or errno. */
static int create_component(const char* path, const char* name, const struct gpupart_smlp_shape* shape,
                            int group_may_write) {
    char why[200];
    struct gpupart_smlp_file* image = calloc(1, sizeof *image);
    if (image == NULL) return smlp_fail(ENOMEM, "out of memory");
    int error = -gpupart_smlp_core_init(image, name, shape, (uint32_t)geteuid(), smlp_realtime_ns(), why, sizeof why);
    if (error != 0) {
        free(image);
        return smlp_fail(error, "component %s: %s", name, why);
    }
    char temporary[600];
    snprintf(temporary, sizeof temporary, "%s.XXXXXX", path);
    const int fd = mkostemp(temporary, O_CLOEXEC); /* O_EXCL, a name nobody can predict */
    if (fd < 0) {
        error = errno;
        free(image);
        return smlp_fail(error, "cannot create a file next to %s (%s)", path, strerror(error));
    }
    void* memory = MAP_FAILED;
    if (fchmod(fd, group_may_write ? 0664 : 0644) != 0 ||
        pwrite(fd, image, sizeof *image, 0) != (ssize_t)sizeof *image)
        error = errno != 0 ? errno : EIO;
    if (error == 0) {
        memory = mmap(NULL, sizeof *image, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (memory == MAP_FAILED) error = errno;
    }
    free(image);
    close(fd);
    if (error == 0) error = smlp_mutex_init(((struct gpupart_smlp_file*)memory)->header.lock);
    if (memory != MAP_FAILED) munmap(memory, sizeof *image);
    /* link, not rename: a component that exists already is never replaced. */
    if (error == 0 && link(temporary, path) != 0) error = errno;
    unlink(temporary);
    if (error != 0 && error != EEXIST) return smlp_fail(error, "cannot create %s (%s)", path, strerror(error));
    return error;
}

GPUPART_SMLP_API int gpupart_smlp_open(const char* component, const struct gpupart_smlp_config* config,
                                       struct gpupart_smlp** out) {
    char why[300];
    if (out == NULL) return smlp_fail(EINVAL, "gpupart_smlp_open: no place for the handle");
    *out = NULL;
    if (!gpupart_smlp_core_name_valid(component))
        return smlp_fail(EINVAL, "component name '%.63s...' is not 1-63 of A-Z a-z 0-9 _ . - (not starting with '.')",
                         component != NULL ? component : "(null)");
    char directory[512];
    int group_may_write = 0;
    int error = user_directory(config != NULL, directory, sizeof directory, &group_may_write);
    if (error != 0) return error;
    struct gpupart_smlp* smlp = calloc(1, sizeof *smlp);
    if (smlp == NULL) return smlp_fail(ENOMEM, "out of memory");
    const int length = snprintf(smlp->path, sizeof smlp->path, "%s/%s%s", directory, component, GPUPART_SMLP_SUFFIX);
    if (length < 0 || (size_t)length >= sizeof smlp->path) {
        free(smlp);
        return smlp_fail(ENAMETOOLONG, "the path of component %s is too long", component);
    }
    struct gpupart_smlp_shape wanted;
    if (config != NULL) shape_from_config(config, &wanted);
    int fd = -1;
    for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
        fd = gpupart_smlp_file_open(smlp->path, 1, (uint32_t)geteuid(), group_may_write, why, sizeof why);
        if (fd == -ENOENT && config != NULL) {
            error = create_component(smlp->path, component, &wanted, group_may_write);
            if (error != 0 && error != EEXIST) break;
            error = 0;
        } else if (fd < 0) {
            error = smlp_fail(-fd, "%s%s", why, fd == -ENOENT ? " (open it with a config first)" : "");
            break;
        }
    }
    if (fd < 0 && error == 0) error = smlp_fail(EAGAIN, "%s keeps appearing and disappearing", smlp->path);
    struct gpupart_smlp_file* copy = error == 0 ? malloc(sizeof *copy) : NULL;
    if (error == 0 && copy == NULL) error = smlp_fail(ENOMEM, "out of memory");
    if (error == 0) {
        /* A copy that stays torn (a locker died mid-change) is repaired by the first lock: its header is checked. */
        const int read = gpupart_smlp_file_read(fd, copy, 1000, why, sizeof why);
        if (read != 0 && read != -EAGAIN) error = smlp_fail(-read, "%s: %s", smlp->path, why);
    }
    if (error == 0 && copy->header.owner_uid != (uint32_t)geteuid())
        error = smlp_fail(EPERM, "%s: made for uid %u, not this user", smlp->path, copy->header.owner_uid);
    /* Grants are used as the API's masks, TPC numbers: a component of descriptor bits would grant other TPCs. */
    if (error == 0 && (copy->header.flags & GPUPART_SMLP_NUMBERED) == 0)
        error = smlp_fail(EPROTO, "component %s was made by a libgpupart before TPC numbers: its TPCs are launch-descriptor "
                                  "bits, which this library's masks are not (remove %s when no process uses it, and open "
                                  "it again)", component, smlp->path);
    if (error == 0 && config != NULL) {
        struct gpupart_smlp_shape stored;
        gpupart_smlp_core_shape(copy, &stored);
        if (gpupart_smlp_core_shape_match(&stored, &wanted, why, sizeof why) != 0)
            error = smlp_fail(EEXIST, "component %s exists with other settings: %s (remove %s when no process uses it, "
                                      "or choose another name)", component, why, smlp->path);
    }
    free(copy);
    if (error == 0) {
        void* memory = mmap(NULL, sizeof(struct gpupart_smlp_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (memory == MAP_FAILED) error = smlp_fail(errno, "cannot map %s (%s)", smlp->path, strerror(errno));
        else smlp->file = memory;
    }
    if (error != 0) {
        if (fd >= 0) close(fd);
        free(smlp);
        return error;
    }
    smlp->fd = fd;
    smlp->pid = getpid();
    smlp->start_time = gpupart_process_start_time(smlp->pid);
    *out = smlp;
    return 0;
}

/* H/h: how many lengths a request may list. */
static uint32_t level_limit(const struct gpupart_smlp_file* file) {
    const uint32_t* t = file->header.tpcs;
    const uint32_t tpcs = (uint32_t)(__builtin_popcount(t[0]) + __builtin_popcount(t[1]) + __builtin_popcount(t[2]) +
                                     __builtin_popcount(t[3]));
    return file->header.h != 0 ? tpcs / file->header.h : 0;
}

static int same_request(const struct gpupart_smlp_request* record, const struct gpupart_smlp_request* issued) {
    return record->pid == issued->pid && record->start_time == issued->start_time && record->tid == issued->tid &&
           record->issued_realtime_ns == issued->issued_realtime_ns;
}

__extension__ typedef unsigned __int128 mask128;

static void fill_grant(const struct gpupart_smlp_request* record, struct gpupart_smlp_grant* grant) {
    mask128 allowed = 0;
    for (int w = 0; w < 4; ++w) {
        grant->allowed[w] = record->granted[w];
        allowed |= (mask128)record->granted[w] << (32 * w);
    }
    grant->count = record->granted_tpcs;
    grant->ticket = record->ticket;
    grant->disable_mask = ~allowed;
}

static int lock_request(struct gpupart_smlp* smlp, const struct gpupart_smlp_request_spec* spec,
                        struct gpupart_smlp_grant* grant, int timed, uint64_t timeout_ns) {
    if (smlp == NULL || spec == NULL || grant == NULL) return smlp_fail(EINVAL, "gpupart_smlp_lock: a NULL argument");
    const uint64_t start = smlp_monotonic_ns();
    const uint64_t deadline = timed && timeout_ns < UINT64_MAX - start ? start + timeout_ns : UINT64_MAX;
    struct smlp_change change;
    int error = smlp_change_begin(smlp, &change);
    if (error != 0) return error;
    smlp_change_sweep(&change);
    smlp_change_write(&change);
    const struct gpupart_smlp_issue issue = {smlp->pid,         smlp->start_time,   (int32_t)gettid(),
                                             spec->priority,    spec->levels,       spec->level_count,
                                             spec->tolerance_ppm, spec->label};
    const int index = gpupart_smlp_core_issue(smlp->file, &issue, smlp_realtime_ns());
    if (index < 0) {
        smlp_change_end(&change);
        if (index == -EBUSY) return smlp_fail(EBUSY, "%s: all %u requests are in use", smlp->path, GPUPART_SMLP_MAX_REQUESTS);
        return smlp_fail(EINVAL, "bad request: 1..H/h = %u lengths and a tolerance up to %u ppm, please",
                         level_limit(smlp->file), GPUPART_SMLP_MAX_TOLERANCE_PPM);
    }
    struct gpupart_smlp_request* record = &smlp->file->requests[index];
    const struct gpupart_smlp_request issued = *record;
    __atomic_or_fetch(&smlp->owned, 1ull << index, __ATOMIC_RELAXED);
    for (;;) {
        if (!same_request(record, &issued) || __atomic_load_n(&record->queue, __ATOMIC_ACQUIRE) == GPUPART_SMLP_FREE) {
            __atomic_and_fetch(&smlp->owned, ~(1ull << index), __ATOMIC_RELAXED);
            smlp_change_end(&change);
            return smlp_fail(EIO, "%s: the request disappeared (the file was changed behind the protocol)", smlp->path);
        }
        if (__atomic_load_n(&record->queue, __ATOMIC_ACQUIRE) == GPUPART_SMLP_SQ) {
            fill_grant(record, grant);
            smlp_change_end(&change);
            return 0;
        }
        const uint64_t now = smlp_monotonic_ns();
        if (now >= deadline) {
            smlp_change_write(&change);
            gpupart_smlp_core_withdraw(smlp->file, index, smlp_realtime_ns());
            __atomic_and_fetch(&smlp->owned, ~(1ull << index), __ATOMIC_RELAXED);
            smlp_change_end(&change);
            return smlp_fail(ETIMEDOUT, "%s: not granted within %llu ns (withdrawn)", smlp->path,
                             (unsigned long long)timeout_ns);
        }
        const uint32_t seen = smlp_change_end(&change);
        const uint64_t left = deadline - now;
        const int quiet = smlp_wait(smlp, seen, left < SMLP_SWEEP_PERIOD_NS ? left : SMLP_SWEEP_PERIOD_NS);
        error = smlp_change_begin(smlp, &change);
        if (error != 0) return error; /* the record stays: it is reclaimed when this process exits */
        if (quiet) smlp_change_sweep(&change); /* nothing changed for a while: is a holder dead? */
    }
}

GPUPART_SMLP_API int gpupart_smlp_lock(struct gpupart_smlp* smlp, const struct gpupart_smlp_request_spec* spec,
                                       struct gpupart_smlp_grant* grant) {
    return lock_request(smlp, spec, grant, 0, 0);
}

GPUPART_SMLP_API int gpupart_smlp_lock_timed(struct gpupart_smlp* smlp, const struct gpupart_smlp_request_spec* spec,
                                             struct gpupart_smlp_grant* grant, uint64_t timeout_ns) {
    return lock_request(smlp, spec, grant, 1, timeout_ns);
}

/* The SQ record of this process that `grant` names, or -1. */
static int find_grant(const struct gpupart_smlp* smlp, const struct gpupart_smlp_grant* grant) {
    for (int i = 0; i < (int)GPUPART_SMLP_MAX_REQUESTS; ++i) {
        const struct gpupart_smlp_request* record = &smlp->file->requests[i];
        if (__atomic_load_n(&record->queue, __ATOMIC_ACQUIRE) == GPUPART_SMLP_SQ && record->ticket == grant->ticket &&
            record->pid == smlp->pid && record->start_time == smlp->start_time &&
            memcmp(record->granted, grant->allowed, sizeof record->granted) == 0)
            return i;
    }
    return -1;
}

GPUPART_SMLP_API int gpupart_smlp_unlock(struct gpupart_smlp* smlp, const struct gpupart_smlp_grant* grant) {
    if (smlp == NULL || grant == NULL) return smlp_fail(EINVAL, "gpupart_smlp_unlock: a NULL argument");
    struct smlp_change change;
    const int error = smlp_change_begin(smlp, &change);
    if (error != 0) return error;
    const int index = find_grant(smlp, grant);
    if (index < 0) {
        smlp_change_end(&change);
        return smlp_fail(EINVAL, "%s: ticket %llu is not a grant this process holds (unlocked twice?)", smlp->path,
                         (unsigned long long)grant->ticket);
    }
    smlp_change_write(&change);
    smlp_change_restore(&change, &smlp->file->requests[index]); /* the holder's own policy back (Rule 3) */
    gpupart_smlp_core_finalize(smlp->file, index, smlp_realtime_ns());
    __atomic_and_fetch(&smlp->owned, ~(1ull << index), __ATOMIC_RELAXED);
    smlp_change_sweep(&change);
    smlp_change_end(&change);
    return 0;
}

GPUPART_SMLP_API int gpupart_smlp_close(struct gpupart_smlp* smlp) {
    if (smlp == NULL) return 0;
    int error = 0;
    const uint64_t owned = __atomic_load_n(&smlp->owned, __ATOMIC_RELAXED);
    if (owned != 0) {
        struct smlp_change change;
        error = smlp_change_begin(smlp, &change);
        if (error == 0) {
            const uint64_t now = smlp_realtime_ns();
            for (int i = 0; i < (int)GPUPART_SMLP_MAX_REQUESTS; ++i) {
                struct gpupart_smlp_request* record = &smlp->file->requests[i];
                if (((owned >> i) & 1u) == 0 || record->pid != smlp->pid || record->start_time != smlp->start_time)
                    continue;
                smlp_change_write(&change);
                smlp_change_restore(&change, record);
                if (gpupart_smlp_core_finalize(smlp->file, i, now) != 0) gpupart_smlp_core_withdraw(smlp->file, i, now);
            }
            smlp_change_end(&change);
        }
    }
    munmap(smlp->file, sizeof *smlp->file);
    close(smlp->fd);
    free(smlp);
    return error;
}
