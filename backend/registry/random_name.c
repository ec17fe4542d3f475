/* Random name suffixes for files made in shared directories (random_name.h says why). */
#define _GNU_SOURCE
#include "random_name.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

int gpupart_random_suffix(char out[7]) {
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
