/* The shim's pointer-keyed table (shim_table.h): open addressing, linear probing, backward-shift deletion
 * (no tombstones, so lookups stay short however many execs come and go). */
#include "shim_table.h"

#include <stdint.h>
#include <stdlib.h>

static size_t slot_of(const struct gpupart_table* t, const void* key) {
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 29; /* handles are aligned heap pointers: mix */
    return (size_t)h & (t->capacity - 1);
}

void* gpupart_table_find(const struct gpupart_table* t, const void* key) {
    if (t->capacity == 0) return NULL;
    for (size_t i = slot_of(t, key);; i = (i + 1) & (t->capacity - 1)) {
        if (t->keys[i] == NULL) return NULL;
        if (t->keys[i] == key) return t->values[i];
    }
}

int gpupart_table_put(struct gpupart_table* t, void* key, void* value) {
    if ((t->size + 1) * 2 > t->capacity) {
        struct gpupart_table bigger = {calloc(t->capacity ? t->capacity * 2 : 64, sizeof(void*)),
                               calloc(t->capacity ? t->capacity * 2 : 64, sizeof(void*)),
                               t->capacity ? t->capacity * 2 : 64, 0};
        if (bigger.keys == NULL || bigger.values == NULL) {
            free(bigger.keys);
            free(bigger.values);
            return -1;
        }
        for (size_t i = 0; i < t->capacity; ++i)
            if (t->keys[i] != NULL) gpupart_table_put(&bigger, t->keys[i], t->values[i]);
        free(t->keys);
        free(t->values);
        *t = bigger;
    }
    size_t i = slot_of(t, key);
    while (t->keys[i] != NULL && t->keys[i] != key) i = (i + 1) & (t->capacity - 1);
    if (t->keys[i] == NULL) ++t->size;
    t->keys[i] = key;
    t->values[i] = value;
    return 0;
}

void* gpupart_table_remove(struct gpupart_table* t, const void* key) {
    if (t->capacity == 0) return NULL;
    size_t i = slot_of(t, key);
    while (t->keys[i] != key) {
        if (t->keys[i] == NULL) return NULL;
        i = (i + 1) & (t->capacity - 1);
    }
    void* value = t->values[i];
    for (size_t j = (i + 1) & (t->capacity - 1); t->keys[j] != NULL; j = (j + 1) & (t->capacity - 1)) {
        const size_t home = slot_of(t, t->keys[j]); /* move j back into the hole if its probe passed i */
        if (((j - home) & (t->capacity - 1)) >= ((j - i) & (t->capacity - 1))) {
            t->keys[i] = t->keys[j];
            t->values[i] = t->values[j];
            i = j;
        }
    }
    t->keys[i] = NULL;
    t->values[i] = NULL;
    --t->size;
    return value;
}
