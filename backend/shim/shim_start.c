/* The command line and start masks of a shimmed process (shim_start.h). */
#define _GNU_SOURCE
#include "shim_start.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry_slot.h"

/* The command line with arguments joined by spaces, and the base name of argv[0] (what profile rules
 * call "exe"). */
void gpupart_read_command(char* out, size_t size, char* exe, size_t exe_size) {
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) n = 0;
    out[n] = '\0';
    const char* slash = strrchr(out, '/'); /* argv[0] ends at the first NUL */
    snprintf(exe, exe_size, "%s", slash != NULL ? slash + 1 : out);
    for (ssize_t i = 0; i + 1 < n; ++i)
        if (out[i] == '\0') out[i] = ' ';
}

/* A profile rule for this process, if `gpupart profile apply` armed one: this user's rules first, then
 * root's, each from that user's own (trusted) directory. A profile rule is stored resolved once per GPU
 * (same line, one UUID each): the process starts with the masks of every GPU of the first rule that
 * matches. Fills the control payload and says which rule in `start_rule`. */
static int control_from_rules(const char* root, const char* exe, const char* command, struct gpupart_control_payload* c,
                              char* start_rule, size_t start_rule_size) {
    static struct gpupart_rules_file rules; /* 16 KiB: not on the stack; setup runs once */
    const uint32_t uids[2] = {(uint32_t)getuid(), 0u};
    for (int i = 0; i < (uids[0] == 0 ? 1 : 2); ++i) {
        char user_dir[512];
        if (gpupart_user_dir(root, uids[i], 0, user_dir, sizeof user_dir) != 0) continue;
        if (gpupart_rules_read(user_dir, uids[i], &rules) != 0) continue;
        const int found = gpupart_rules_match(&rules, exe, command, (uint32_t)getuid());
        if (found < 0) continue;
        const struct gpupart_rule* first = &rules.rules[found];
        const uint32_t line = first->line;
        for (uint32_t r = (uint32_t)found; r < rules.count && r < GPUPART_RULES_MAX && c->count < GPUPART_MAX_GPUS; ++r) {
            const struct gpupart_rule* rule = &rules.rules[r];
            const int same_rule = rule->line == line && rule->match == first->match && rule->uid == first->uid &&
                                  memcmp(rule->exe, first->exe, sizeof rule->exe) == 0 &&
                                  memcmp(rule->cmdline, first->cmdline, sizeof rule->cmdline) == 0;
            if (!same_rule || gpupart_uuid_is_zero(&rule->gpu) || gpupart_control_find(c, &rule->gpu) >= 0) continue;
            struct gpupart_control_gpu* entry = &c->gpus[c->count++];
            entry->uuid = rule->gpu;
            entry->flags = GPUPART_CONTROL_HAS_MASK;
            memcpy(entry->allowed, rule->allowed, sizeof entry->allowed);
            memcpy(entry->real_tpcs, rule->real_tpcs, sizeof entry->real_tpcs);
        }
        if (c->count == 0) continue;
        c->generation = 1;
        c->writer_uid = uids[i];
        snprintf(start_rule, start_rule_size, "profile %.40s rule at line %u (uid %u)", rules.profile, line,
                 (unsigned)uids[i]);
        return 1;
    }
    return 0;
}

/* GPUPART_TPCS / GPUPART_REAL_TPCS into control entries; -1 (and nothing filled) if malformed or if a
 * GPU of GPUPART_TPCS has no real-TPC bits. */
static int control_from_environment(const char* tpcs, const char* real, struct gpupart_control_payload* c) {
    struct gpupart_gpu_uuid uuids[GPUPART_MAX_GPUS], real_uuids[GPUPART_MAX_GPUS];
    uint32_t masks[GPUPART_MAX_GPUS][4], real_masks[GPUPART_MAX_GPUS][4];
    const int count = gpupart_parse_gpu_masks(tpcs, uuids, masks, GPUPART_MAX_GPUS);
    const int real_count = gpupart_parse_gpu_masks(real, real_uuids, real_masks, GPUPART_MAX_GPUS);
    if (count <= 0 || real_count <= 0) return -1;
    for (int i = 0; i < count; ++i) {
        int r = 0;
        while (r < real_count && !gpupart_uuid_equal(&real_uuids[r], &uuids[i])) ++r;
        if (r == real_count) return -1;
        struct gpupart_control_gpu* entry = &c->gpus[i];
        entry->uuid = uuids[i];
        entry->flags = GPUPART_CONTROL_HAS_MASK;
        memcpy(entry->allowed, masks[i], sizeof entry->allowed);
        memcpy(entry->real_tpcs, real_masks[r], sizeof entry->real_tpcs);
    }
    c->count = (uint32_t)count;
    return 0;
}

uint32_t gpupart_start_control(const char* root, const char* exe, const char* command, struct gpupart_control_payload* c,
                               char* start_rule, size_t start_rule_size) {
    memset(c, 0, sizeof *c);
    c->writer_pid = getpid();
    c->writer_uid = getuid();
    start_rule[0] = '\0';
    const char* tpcs = getenv(GPUPART_ENV_TPCS);
    if (tpcs == NULL || tpcs[0] == '\0') {
        if (root != NULL) control_from_rules(root, exe, command, c, start_rule, start_rule_size);
        return GPUPART_SHIM_WAITING;
    }
    if (control_from_environment(tpcs, getenv(GPUPART_ENV_REAL_TPCS), c) != 0) {
        memset(c->gpus, 0, sizeof c->gpus);
        c->count = 0;
        fprintf(stderr, "gpupart-shim: %s or %s is not \"GPU-<uuid>=0x<mask>[;...]\" for the same GPUs: this process is "
                "not partitioned\n", GPUPART_ENV_TPCS, GPUPART_ENV_REAL_TPCS);
        return GPUPART_SHIM_BAD_ENVIRONMENT;
    }
    c->generation = 1;
    snprintf(start_rule, start_rule_size, "%s", GPUPART_ENV_TPCS);
    return GPUPART_SHIM_WAITING;
}
