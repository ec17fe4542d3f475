/*
 * Parsing the mask text gpupart hands a process through its environment (GPUPART_TPCS, GPUPART_REAL_TPCS):
 * strict, because the shim reads it inside the user's program and must refuse rather than guess.
 * Declarations: gpu_mask_text.h.
 */
#include "gpu_mask_text.h"

#include <errno.h>
#include <string.h>

#include "uuid_text.h"

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
