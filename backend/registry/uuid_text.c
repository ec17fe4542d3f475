/* GPU UUIDs as the registry stores them (four words) and as NVML prints them (uuid_text.h). */
#include "uuid_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
