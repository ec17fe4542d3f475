/*
 * A pointer-keyed hash table for the shim's graph follower (graph execs and graphs by their handles).
 * Not thread-safe: the follower uses it under its lock only. Keys are never NULL.
 */
#ifndef GPUPART_SHIM_TABLE_H
#define GPUPART_SHIM_TABLE_H

#include <stddef.h>

/* A pointer-keyed open-addressing table (linear probing, backward-shift deletion). */
struct gpupart_table {
    void** keys;
    void** values;
    size_t capacity;            /* a power of two, or 0 */
    size_t size;
};

/* The value stored under `key`, or NULL. */
void* gpupart_table_find(const struct gpupart_table* t, const void* key);

/* Stores `value` under `key` (replacing an older one), growing the table at half load. -1 when out of memory. */
int gpupart_table_put(struct gpupart_table* t, void* key, void* value);

/* Removes `key` and returns its value, or NULL when it is not there. */
void* gpupart_table_remove(struct gpupart_table* t, const void* key);

#endif /* GPUPART_SHIM_TABLE_H */
