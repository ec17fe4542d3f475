#define _GNU_SOURCE
#include "registry_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "registry_seqlock.h"

int gpupart_registry_dir(char* out, size_t size) {
    const char* chosen = getenv(GPUPART_ENV_REGISTRY_DIR);
    struct stat info;
    if (chosen == NULL || chosen[0] == '\0')
        chosen = (stat("/run/gpupart", &info) == 0 && S_ISDIR(info.st_mode)) ? "/run/gpupart" : "/dev/shm/gpupart";
    if (strlen(chosen) + 1 > size) return -ENAMETOOLONG;
    memcpy(out, chosen, strlen(chosen) + 1);
    return 0;
}

int gpupart_registry_dir_ensure(const char* dir) {
    if (mkdir(dir, 01777) == 0) {
        /* mkdir's mode is filtered by the umask; the sticky, world-writable mode is the point. */
        if (chmod(dir, 01777) != 0) return -errno;
        return 0;
    }
    if (errno != EEXIST) return -errno;
    struct stat info;
    if (stat(dir, &info) != 0) return -errno;
    return S_ISDIR(info.st_mode) ? 0 : -ENOTDIR;
}

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

static uint64_t realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int gpupart_slot_create(const char* dir, int pid, uint64_t start_time, uint32_t uid, const char* command,
                        const char* shim_version, const char* start_rule, const struct gpupart_control* initial,
                        struct gpupart_slot_file** mapped, char* path, size_t path_size) {
    char temporary[512];
    int written = snprintf(path, path_size, "%s/%d-%llu%s", dir, pid, (unsigned long long)start_time, GPUPART_SLOT_SUFFIX);
    if (written < 0 || (size_t)written >= path_size) return -ENAMETOOLONG;
    written = snprintf(temporary, sizeof temporary, "%s.new", path);
    if (written < 0 || (size_t)written >= sizeof temporary) return -ENAMETOOLONG;

    int fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0664);
    if (fd < 0) return -errno;
    int error = 0;
    void* memory = MAP_FAILED;
    /* Explicit mode: owner and the directory's (setgid) admin group may write, everybody may read. */
    if (fchmod(fd, 0664) != 0 || ftruncate(fd, GPUPART_SLOT_FILE_SIZE) != 0) error = -errno;
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
    if (initial != NULL) gpupart_control_write(&slot->control, initial);
    __atomic_store_n(&slot->header.state, (uint32_t)GPUPART_SLOT_LIVE, __ATOMIC_RELEASE);
    if (rename(temporary, path) != 0) {
        error = -errno;
        munmap(memory, GPUPART_SLOT_FILE_SIZE);
        unlink(temporary);
        return error;
    }
    *mapped = slot;
    return 0;
}

int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&control->seq);
        copy->seq = begin;
        copy->flags = gpupart_payload_load32(&control->flags);
        copy->generation = gpupart_payload_load64(&control->generation);
        for (int i = 0; i < 4; ++i) {
            copy->allowed[i] = gpupart_payload_load32(&control->allowed[i]);
            copy->real_tpcs[i] = gpupart_payload_load32(&control->real_tpcs[i]);
        }
        copy->writer_pid = (int32_t)gpupart_payload_load32((const uint32_t*)&control->writer_pid);
        copy->writer_uid = gpupart_payload_load32(&control->writer_uid);
        copy->written_realtime_ns = gpupart_payload_load64(&control->written_realtime_ns);
        if (!gpupart_seq_read_retry(&control->seq, begin)) return 0;
    }
    return -EAGAIN;
}

void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control* value) {
    const uint32_t odd = gpupart_seq_write_begin(&control->seq);
    gpupart_payload_store32(&control->flags, value->flags);
    gpupart_payload_store64(&control->generation, value->generation);
    for (int i = 0; i < 4; ++i) {
        gpupart_payload_store32(&control->allowed[i], value->allowed[i]);
        gpupart_payload_store32(&control->real_tpcs[i], value->real_tpcs[i]);
    }
    gpupart_payload_store32((uint32_t*)&control->writer_pid, (uint32_t)value->writer_pid);
    gpupart_payload_store32(&control->writer_uid, value->writer_uid);
    gpupart_payload_store64(&control->written_realtime_ns, value->written_realtime_ns);
    gpupart_seq_write_end(&control->seq, odd);
}

int gpupart_status_read(const struct gpupart_status* status, struct gpupart_status* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&status->seq);
        copy->seq = begin;
        copy->state = gpupart_payload_load32(&status->state);
        copy->descriptor_version = gpupart_payload_load32(&status->descriptor_version);
        copy->applied_generation = gpupart_payload_load64(&status->applied_generation);
        for (int i = 0; i < 4; ++i) copy->applied[i] = gpupart_payload_load32(&status->applied[i]);
        copy->applied_flags = gpupart_payload_load32(&status->applied_flags);
        if (!gpupart_seq_read_retry(&status->seq, begin)) return 0;
    }
    return -EAGAIN;
}

void gpupart_status_write(struct gpupart_status* status, const struct gpupart_status* value) {
    const uint32_t odd = gpupart_seq_write_begin(&status->seq);
    gpupart_payload_store32(&status->state, value->state);
    gpupart_payload_store32(&status->descriptor_version, value->descriptor_version);
    gpupart_payload_store64(&status->applied_generation, value->applied_generation);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&status->applied[i], value->applied[i]);
    gpupart_payload_store32(&status->applied_flags, value->applied_flags);
    gpupart_seq_write_end(&status->seq, odd);
}

static void rules_path(char* out, size_t size, const char* dir, uint32_t uid) {
    snprintf(out, size, "%s/%s%u", dir, GPUPART_RULES_PREFIX, (unsigned)uid);
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

int gpupart_rules_write(const char* dir, uint32_t uid, const struct gpupart_rules_file* rules) {
    char path[512];
    rules_path(path, sizeof path, dir, uid);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return -errno;
    int error = lock_file(fd, F_WRLCK);
    if (error == 0 && (fchmod(fd, 0644) != 0 || ftruncate(fd, (off_t)sizeof *rules) != 0)) error = -errno;
    if (error == 0 && pwrite(fd, rules, sizeof *rules, 0) != (ssize_t)sizeof *rules) error = errno ? -errno : -EIO;
    close(fd); /* closing drops the OFD lock */
    return error;
}

int gpupart_rules_read(const char* dir, uint32_t uid, struct gpupart_rules_file* rules) {
    char path[512];
    rules_path(path, sizeof path, dir, uid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -errno;
    struct stat info;
    int error = 0;
    if (fstat(fd, &info) != 0) error = -errno;
    else if (info.st_uid != uid || info.st_size != (off_t)sizeof *rules) error = -EPERM; /* not really that user's */
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

int gpupart_control_has_real_tpc(const struct gpupart_control* control) {
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
