/* Text from another process reduced to printable ASCII before it is stored or shown (printable_ascii.h). */
#include "printable_ascii.h"

void gpupart_printable_ascii(const char* text, char* out, size_t size) {
    size_t used = 0;
    if (size == 0) return;
    for (; text != NULL && *text != '\0' && used + 1 < size; ++text)
        if (*text >= 0x20 && *text <= 0x7e) out[used++] = *text;
    out[used] = '\0';
}
