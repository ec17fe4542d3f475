#define _GNU_SOURCE
#include "registry_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "registry_seqlock.h"

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

/* 6 random letters for a squatted user directory's twin (getrandom; no libc state to share with the host). */
static int random_suffix(char out[7]) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[6];
    size_t filled = 0;
    while (filled < sizeof bytes) {
        const ssize_t n = getrandom(bytes + filled, sizeof bytes - filled, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -EIO;
        filled += (size_t)n;
    }
    for (int i = 0; i < 6; ++i) out[i] = letters[bytes[i] % (sizeof letters - 1)];
    out[6] = '\0';
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
        if (random_suffix(suffix) != 0) return -EIO;
        snprintf(name, sizeof name, "%s%u.%s", prefix, (unsigned)uid, suffix);
    }
    if (gpupart_user_dir_check(root, name, &owner, NULL, 0) != 0) return -EPERM;
    if ((size_t)snprintf(out, out_size, "%s/%s", root, name) >= out_size) return -ENAMETOOLONG;
    return 0;
}

static uint64_t realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void gpupart_printable_ascii(const char* text, char* out, size_t size) {
    size_t used = 0;
    if (size == 0) return;
    for (; text != NULL && *text != '\0' && used + 1 < size; ++text)
        if (*text >= 0x20 && *text <= 0x7e) out[used++] = *text;
    out[used] = '\0';
}

int gpupart_slot_create(const char* dir, int pid, uint64_t start_time, uint32_t uid, const char* command,
                        const char* shim_version, const char* start_rule, const char* job,
                        const struct gpupart_control_payload* initial, struct gpupart_slot_file** mapped, char* path,
                        size_t path_size) {
    char temporary[512];
    char suffix[7];
    int written = snprintf(path, path_size, "%s/%d-%llu%s", dir, pid, (unsigned long long)start_time, GPUPART_SLOT_SUFFIX);
    if (written < 0 || (size_t)written >= path_size) return -ENAMETOOLONG;
    if (random_suffix(suffix) != 0) return -EIO;
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

/* Copies a control payload field by field with atomic loads and stores: the seqlock's payload accesses
 * (registry_seqlock.h). Used to read, write, save and restore; either side may be a private copy. */
static void payload_copy(struct gpupart_control_payload* to, const struct gpupart_control_payload* from) {
    gpupart_payload_store64(&to->generation, gpupart_payload_load64(&from->generation));
    gpupart_payload_store32(&to->count, gpupart_payload_load32(&from->count));
    gpupart_payload_store32((uint32_t*)&to->writer_pid, gpupart_payload_load32((const uint32_t*)&from->writer_pid));
    gpupart_payload_store32(&to->writer_uid, gpupart_payload_load32(&from->writer_uid));
    gpupart_payload_store64(&to->written_realtime_ns, gpupart_payload_load64(&from->written_realtime_ns));
    for (unsigned g = 0; g < GPUPART_MAX_GPUS; ++g) {
        struct gpupart_control_gpu* t = &to->gpus[g];
        const struct gpupart_control_gpu* f = &from->gpus[g];
        gpupart_payload_store32(&t->flags, gpupart_payload_load32(&f->flags));
        for (int i = 0; i < 4; ++i) {
            gpupart_payload_store32(&t->uuid.words[i], gpupart_payload_load32(&f->uuid.words[i]));
            gpupart_payload_store32(&t->allowed[i], gpupart_payload_load32(&f->allowed[i]));
            gpupart_payload_store32(&t->real_tpcs[i], gpupart_payload_load32(&f->real_tpcs[i]));
        }
    }
}

int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&control->seq);
        copy->seq = begin;
        payload_copy(&copy->current, &control->current);
        if (!gpupart_seq_read_retry(&control->seq, begin)) {
            if (copy->current.count > GPUPART_MAX_GPUS) copy->current.count = GPUPART_MAX_GPUS; /* never trusted as an index */
            return 0;
        }
    }
    return -EAGAIN;
}

void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control_payload* value) {
    /* The block being replaced is saved whole first (seq still even), for the successor of a writer that
     * dies below. A dead writer's odd seq is completed by restoring that saved block (gpupart_control_repair). */
    if ((__atomic_load_n(&control->seq, __ATOMIC_RELAXED) & 1u) != 0) gpupart_control_repair(control);
    payload_copy(&control->saved, &control->current);
    const uint32_t odd = gpupart_seq_write_begin(&control->seq);
    payload_copy(&control->current, value);
    gpupart_seq_write_end(&control->seq, odd);
}

void gpupart_control_repair(struct gpupart_control* control) {
    const uint32_t seq = __atomic_load_n(&control->seq, __ATOMIC_RELAXED);
    if ((seq & 1u) == 0) return;
    payload_copy(&control->current, &control->saved);
    gpupart_seq_write_end(&control->seq, seq);
}

int gpupart_control_find(const struct gpupart_control_payload* payload, const struct gpupart_gpu_uuid* uuid) {
    const uint32_t count = payload->count < GPUPART_MAX_GPUS ? payload->count : GPUPART_MAX_GPUS;
    for (uint32_t i = 0; i < count; ++i)
        if (gpupart_uuid_equal(&payload->gpus[i].uuid, uuid)) return (int)i;
    return -1;
}

int gpupart_status_gpu_read(const struct gpupart_status_gpu* entry, struct gpupart_status_gpu* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&entry->seq);
        copy->seq = begin;
        for (int i = 0; i < 4; ++i) {
            copy->uuid.words[i] = gpupart_payload_load32(&entry->uuid.words[i]);
            copy->applied[i] = gpupart_payload_load32(&entry->applied[i]);
        }
        copy->state = gpupart_payload_load32(&entry->state);
        copy->descriptor_version = gpupart_payload_load32(&entry->descriptor_version);
        copy->applied_generation = gpupart_payload_load64(&entry->applied_generation);
        copy->applied_flags = gpupart_payload_load32(&entry->applied_flags);
        if (!gpupart_seq_read_retry(&entry->seq, begin)) return 0;
    }
    return -EAGAIN;
}

void gpupart_status_gpu_write(struct gpupart_status_gpu* entry, const struct gpupart_status_gpu* value) {
    const uint32_t odd = gpupart_seq_write_begin(&entry->seq);
    gpupart_payload_store32(&entry->state, value->state);
    gpupart_payload_store32(&entry->descriptor_version, value->descriptor_version);
    gpupart_payload_store64(&entry->applied_generation, value->applied_generation);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&entry->applied[i], value->applied[i]);
    gpupart_payload_store32(&entry->applied_flags, value->applied_flags);
    gpupart_seq_write_end(&entry->seq, odd);
}

int gpupart_uuid_equal(const struct gpupart_gpu_uuid* a, const struct gpupart_gpu_uuid* b) {
    return a->words[0] == b->words[0] && a->words[1] == b->words[1] && a->words[2] == b->words[2] &&
           a->words[3] == b->words[3];
}

int gpupart_uuid_is_zero(const struct gpupart_gpu_uuid* uuid) {
    return (uuid->words[0] | uuid->words[1] | uuid->words[2] | uuid->words[3]) == 0;
}

void gpupart_uuid_from_bytes(const unsigned char bytes[16], struct gpupart_gpu_uuid* uuid) {
    memcpy(uuid->words, bytes, 16);
}

void gpupart_uuid_format(const struct gpupart_gpu_uuid* uuid, char out[GPUPART_UUID_TEXT_BYTES]) {
    unsigned char b[16];
    memcpy(b, uuid->words, 16);
    snprintf(out, GPUPART_UUID_TEXT_BYTES,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
             b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int gpupart_uuid_parse(const char* text, struct gpupart_gpu_uuid* uuid) {
    /* "GPU-" then 8-4-4-4-12 hex digits: exactly 40 characters. */
    static const char shape[] = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    unsigned char bytes[16];
    int nibble = 0;
    if (text == NULL) return -EINVAL;
    for (int i = 0; shape[i] != '\0'; ++i) {
        if (text[i] == '\0') return -EINVAL;
        if (shape[i] != 'x') {
            if (text[i] != shape[i]) return -EINVAL;
            continue;
        }
        const int digit = hex_digit(text[i]);
        if (digit < 0) return -EINVAL;
        if ((nibble & 1) == 0) bytes[nibble / 2] = (unsigned char)(digit << 4);
        else bytes[nibble / 2] |= (unsigned char)digit;
        ++nibble;
    }
    gpupart_uuid_from_bytes(bytes, uuid);
    return (int)(sizeof shape - 1);
}

int gpupart_parse_gpu_masks(const char* text, struct gpupart_gpu_uuid uuids[], uint32_t masks[][4], int max) {
    int count = 0;
    if (text == NULL || text[0] == '\0') return -EINVAL;
    const char* p = text;
    for (;;) {
        if (count == max) return -EINVAL;
        const int used = gpupart_uuid_parse(p, &uuids[count]);
        if (used < 0 || p[used] != '=') return -EINVAL;
        p += used + 1;
        char mask[40];
        size_t length = strcspn(p, ";");
        if (length == 0 || length >= sizeof mask) return -EINVAL;
        memcpy(mask, p, length);
        mask[length] = '\0';
        if (gpupart_parse_hex_mask(mask, masks[count]) != 0) return -EINVAL;
        for (int i = 0; i < count; ++i)
            if (gpupart_uuid_equal(&uuids[i], &uuids[count])) return -EINVAL; /* one mask per GPU */
        ++count;
        p += length;
        if (*p == '\0') return count;
        ++p; /* ';' */
        if (*p == '\0') return -EINVAL;
    }
}

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
    if (random_suffix(suffix) != 0) return -EIO;
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

int gpupart_control_has_real_tpc(const struct gpupart_control_gpu* control) {
    uint32_t usable = 0;
    for (int i = 0; i < 4; ++i) usable |= control->allowed[i] & control->real_tpcs[i];
    return usable != 0;
}

int gpupart_parse_hex_mask(const char* text, uint32_t words[4]) {
    uint32_t value[4] = {0, 0, 0, 0};
    if (text == NULL || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') || text[2] == '\0') return -EINVAL;
    for (const char* p = text + 2; *p != '\0'; ++p) {
        uint32_t digit;
        if (*p >= '0' && *p <= '9') digit = (uint32_t)(*p - '0');
        else if (*p >= 'a' && *p <= 'f') digit = (uint32_t)(*p - 'a' + 10);
        else if (*p >= 'A' && *p <= 'F') digit = (uint32_t)(*p - 'A' + 10);
        else return -EINVAL;
        if ((value[3] >> 28) != 0) return -EINVAL; /* more than 128 bits */
        for (int i = 3; i > 0; --i) value[i] = (value[i] << 4) | (value[i - 1] >> 28);
        value[0] = (value[0] << 4) | digit;
    }
    memcpy(words, value, sizeof value);
    return 0;
}
