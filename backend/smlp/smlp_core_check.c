/*
 * Making and checking SMLP component files (smlp_core.h): the header a creator writes, whether a file read
 * from disk is one (a corrupt file is an error with one line, never undefined behaviour in the rules), and
 * whether a joiner's settings match the file's. No system calls.
 */
#include "smlp_core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RECORDS GPUPART_SMLP_MAX_REQUESTS

static uint32_t popcount4(const uint32_t words[4]) {
    return (uint32_t)(__builtin_popcount(words[0]) + __builtin_popcount(words[1]) + __builtin_popcount(words[2]) +
                      __builtin_popcount(words[3]));
}

static int fail(int error, char* why, size_t why_size, const char* format, ...) __attribute__((format(printf, 4, 5)));
static int fail(int error, char* why, size_t why_size, const char* format, ...) {
    if (why != NULL && why_size > 0) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(why, why_size, format, arguments);
        va_end(arguments);
    }
    return error;
}

int gpupart_smlp_core_name_valid(const char* name) {
    if (name == NULL || name[0] == '\0' || name[0] == '.') return 0;
    size_t length = 0;
    for (; name[length] != '\0'; ++length) {
        const char c = name[length];
        const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '.' || c == '-';
        if (!ok || length >= GPUPART_SMLP_NAME_BYTES - 1) return 0;
    }
    return 1;
}

/* H, h, M and the GPC map (each GPC inside the TPCs, no TPC in two GPCs). 0 or `error` with one line. */
static int check_shape(const struct gpupart_smlp_shape* shape, int error, char* why, size_t why_size) {
    const uint32_t tpcs = popcount4(shape->tpcs);
    if (tpcs == 0) return fail(error, why, why_size, "the component has no TPCs");
    if (shape->h == 0 || tpcs % shape->h != 0)
        return fail(error, why, why_size, "h = %u does not divide the component's %u TPCs", shape->h, tpcs);
    if (tpcs / shape->h > GPUPART_SMLP_MAX_LEVELS)
        return fail(error, why, why_size, "%u TPCs in steps of h = %u is more than %u levels", tpcs, shape->h,
                    GPUPART_SMLP_MAX_LEVELS);
    if (shape->fq_length == 0 || shape->fq_length > RECORDS)
        return fail(error, why, why_size, "M (the FQ's length) = %u is not in 1..%u", shape->fq_length, RECORDS);
    if (shape->gpc_count > GPUPART_MAX_GPCS)
        return fail(error, why, why_size, "%u GPCs: at most %u", shape->gpc_count, GPUPART_MAX_GPCS);
    uint32_t seen[4] = {0, 0, 0, 0};
    for (uint32_t g = 0; g < shape->gpc_count; ++g)
        for (int w = 0; w < 4; ++w) {
            if ((shape->gpc_tpcs[g][w] & seen[w]) != 0)
                return fail(error, why, why_size, "GPC %u shares TPCs with an earlier GPC of the map", g);
            seen[w] |= shape->gpc_tpcs[g][w];
        }
    return 0;
}

/* The shape as a file stores it: GPCs restricted to the TPCs, unused GPC entries zero. */
static void normalise(const struct gpupart_smlp_shape* in, struct gpupart_smlp_shape* out) {
    memset(out, 0, sizeof *out);
    out->gpu = in->gpu;
    memcpy(out->tpcs, in->tpcs, sizeof out->tpcs);
    out->h = in->h;
    out->fq_length = in->fq_length;
    out->gpc_count = in->gpc_count <= GPUPART_MAX_GPCS ? in->gpc_count : GPUPART_MAX_GPCS;
    for (uint32_t g = 0; g < out->gpc_count; ++g)
        for (int w = 0; w < 4; ++w) out->gpc_tpcs[g][w] = in->gpc_tpcs[g][w] & in->tpcs[w];
}

int gpupart_smlp_core_init(struct gpupart_smlp_file* file, const char* name, const struct gpupart_smlp_shape* shape,
                           uint32_t owner_uid, uint64_t now_ns, char* why, size_t why_size) {
    if (!gpupart_smlp_core_name_valid(name))
        return fail(-EINVAL, why, why_size, "a component name is 1-63 of A-Z a-z 0-9 _ . - and does not start with '.'");
    struct gpupart_smlp_shape stored;
    normalise(shape, &stored);
    if (shape->gpc_count > GPUPART_MAX_GPCS)
        return fail(-EINVAL, why, why_size, "%u GPCs: at most %u", shape->gpc_count, GPUPART_MAX_GPCS);
    const int error = check_shape(&stored, -EINVAL, why, why_size);
    if (error != 0) return error;
    memset(file, 0, sizeof *file);
    struct gpupart_smlp_component* header = &file->header;
    const char magic[8] = GPUPART_SMLP_MAGIC;
    memcpy(header->magic, magic, sizeof header->magic);
    header->layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    header->file_size = (uint32_t)sizeof *file;
    header->owner_uid = owner_uid;
    header->gpu = stored.gpu;
    memcpy(header->tpcs, stored.tpcs, sizeof header->tpcs);
    header->h = stored.h;
    header->fq_length = stored.fq_length;
    header->next_ticket = 1;
    header->created_realtime_ns = now_ns;
    memcpy(header->name, name, strlen(name) + 1); /* fits: checked by name_valid */
    header->gpc_count = stored.gpc_count;
    memcpy(header->gpc_tpcs, stored.gpc_tpcs, sizeof header->gpc_tpcs);
    header->flags = GPUPART_SMLP_NUMBERED;
    header->state = GPUPART_SLOT_LIVE;
    return 0;
}

void gpupart_smlp_core_shape(const struct gpupart_smlp_file* file, struct gpupart_smlp_shape* shape) {
    memset(shape, 0, sizeof *shape);
    shape->gpu = file->header.gpu;
    memcpy(shape->tpcs, file->header.tpcs, sizeof shape->tpcs);
    shape->h = file->header.h;
    shape->fq_length = file->header.fq_length;
    shape->gpc_count = file->header.gpc_count <= GPUPART_MAX_GPCS ? file->header.gpc_count : GPUPART_MAX_GPCS;
    for (uint32_t g = 0; g < shape->gpc_count; ++g) memcpy(shape->gpc_tpcs[g], file->header.gpc_tpcs[g], 16);
}

int gpupart_smlp_core_shape_match(const struct gpupart_smlp_shape* stored, const struct gpupart_smlp_shape* wanted,
                                  char* why, size_t why_size) {
    struct gpupart_smlp_shape a;
    struct gpupart_smlp_shape b;
    normalise(stored, &a);
    normalise(wanted, &b);
    if (memcmp(&a.gpu, &b.gpu, sizeof a.gpu) != 0) return fail(-EEXIST, why, why_size, "it is on another GPU");
    if (memcmp(a.tpcs, b.tpcs, sizeof a.tpcs) != 0)
        return fail(-EEXIST, why, why_size, "its TPCs are 0x%08x%08x%08x%08x", a.tpcs[3], a.tpcs[2], a.tpcs[1], a.tpcs[0]);
    if (a.h != b.h) return fail(-EEXIST, why, why_size, "its h is %u", a.h);
    if (a.fq_length != b.fq_length) return fail(-EEXIST, why, why_size, "its M is %u", a.fq_length);
    if (a.gpc_count != b.gpc_count || memcmp(a.gpc_tpcs, b.gpc_tpcs, sizeof a.gpc_tpcs) != 0)
        return fail(-EEXIST, why, why_size, "its GPC map differs (%u GPCs)", a.gpc_count);
    return 0;
}

int gpupart_smlp_core_validate_header(const struct gpupart_smlp_file* file, char* why, size_t why_size) {
    const struct gpupart_smlp_component* header = &file->header;
    const char magic[8] = GPUPART_SMLP_MAGIC;
    if (memcmp(header->magic, magic, sizeof magic) != 0) return fail(-EPROTO, why, why_size, "not an SMLP component file");
    if (header->layout_version != GPUPART_REGISTRY_LAYOUT_VERSION)
        return fail(-EPROTO, why, why_size, "registry layout %u, this gpupart reads layout %u", header->layout_version,
                    GPUPART_REGISTRY_LAYOUT_VERSION);
    if (header->file_size != sizeof *file)
        return fail(-EPROTO, why, why_size, "says it is %u bytes, not %zu", header->file_size, sizeof *file);
    if (header->state != GPUPART_SLOT_LIVE) return fail(-EPROTO, why, why_size, "not completely made (state %u)", header->state);
    if (memchr(header->name, '\0', sizeof header->name) == NULL || !gpupart_smlp_core_name_valid(header->name))
        return fail(-EPROTO, why, why_size, "its component name is malformed");
    if (header->gpc_count > GPUPART_MAX_GPCS) return fail(-EPROTO, why, why_size, "%u GPCs in its map", header->gpc_count);
    struct gpupart_smlp_shape shape;
    gpupart_smlp_core_shape(file, &shape);
    for (uint32_t g = 0; g < shape.gpc_count; ++g)
        for (int w = 0; w < 4; ++w)
            if ((shape.gpc_tpcs[g][w] & ~shape.tpcs[w]) != 0)
                return fail(-EPROTO, why, why_size, "GPC %u of its map holds TPCs outside the component", g);
    return check_shape(&shape, -EPROTO, why, why_size);
}

int gpupart_smlp_core_validate(const struct gpupart_smlp_file* file, char* why, size_t why_size) {
    const int error = gpupart_smlp_core_validate_header(file, why, why_size);
    if (error != 0) return error;
    const struct gpupart_smlp_component* header = &file->header;
    const uint32_t limit = popcount4(header->tpcs) / header->h;
    uint32_t held[4] = {0, 0, 0, 0};
    uint32_t in_fq = 0;
    for (unsigned i = 0; i < RECORDS; ++i) {
        const struct gpupart_smlp_request* record = &file->requests[i];
        const uint32_t queue = __atomic_load_n(&record->queue, __ATOMIC_ACQUIRE);
        if (queue == GPUPART_SMLP_FREE) continue;
        if (queue > GPUPART_SMLP_SQ) return fail(-EPROTO, why, why_size, "record %u has queue value %u", i, queue);
        if (record->pid <= 0) return fail(-EPROTO, why, why_size, "record %u names pid %d", i, record->pid);
        if (record->level_count == 0 || record->level_count > limit)
            return fail(-EPROTO, why, why_size, "record %u lists %u lengths (1..%u allowed)", i, record->level_count, limit);
        if (record->tolerance_ppm > GPUPART_SMLP_MAX_TOLERANCE_PPM || record->inheritance > GPUPART_SMLP_INHERIT_REFUSED ||
            memchr(record->label, '\0', sizeof record->label) == NULL)
            return fail(-EPROTO, why, why_size, "record %u has a malformed tolerance, inheritance or label", i);
        if (record->ticket >= header->next_ticket)
            return fail(-EPROTO, why, why_size, "record %u has ticket %llu, not below the next %llu", i,
                        (unsigned long long)record->ticket, (unsigned long long)header->next_ticket);
        if (queue == GPUPART_SMLP_FQ && ++in_fq > header->fq_length)
            return fail(-EPROTO, why, why_size, "the FQ holds more than M = %u requests", header->fq_length);
        if (queue != GPUPART_SMLP_SQ) continue;
        const uint32_t count = popcount4(record->granted);
        if (count != record->granted_tpcs || count == 0 || count % header->h != 0)
            return fail(-EPROTO, why, why_size, "record %u holds %u TPCs but counts %u (h = %u)", i, count,
                        record->granted_tpcs, header->h);
        for (int w = 0; w < 4; ++w) {
            if ((record->granted[w] & ~header->tpcs[w]) != 0)
                return fail(-EPROTO, why, why_size, "record %u holds TPCs outside the component", i);
            if ((record->granted[w] & held[w]) != 0)
                return fail(-EPROTO, why, why_size, "record %u holds TPCs another record holds", i);
            held[w] |= record->granted[w];
        }
    }
    return 0;
}
