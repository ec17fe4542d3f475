/*
 * What the CUDA-graph follower knows about the process's graphs and execs (graph_records.c): which
 * control generation each exec's descriptors carry, its kernel nodes, and the graphs the shim keeps alive
 * for them. Everything here is used under `gpupart_graph_book.lock`, by the follower's callbacks
 * (gpupart_shim_graphs.c) and by the re-mask thread (graph_remasker.c).
 */
#ifndef GPUPART_GRAPH_RECORDS_H
#define GPUPART_GRAPH_RECORDS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "graph_nodes.h"
#include "registry_layout.h"
#include "shim_table.h"

struct exec_record {
    void* exec;
    void* graph;
    void* context;              /* where it was instantiated; NULL: the re-mask thread must not touch it */
    uint64_t generation;        /* control generation its descriptors carry (or get at their upload) */
    uint64_t failed_generation; /* generation at which re-masking it failed (0: none) */
    uint32_t unfollowable;      /* enum gpupart_graph_reach */
    uint32_t device_launch;
    size_t node_count;
    void** nodes;               /* its kernel nodes, those of child graphs included */
};

struct gpupart_graph_book {
    pthread_mutex_t lock;
    struct gpupart_table execs, graphs;
    uint64_t latest_generation;     /* the newest control generation the follower has seen */
    uint64_t current;               /* execs at latest_generation */
    uint64_t failed_at_latest;      /* execs whose re-mask failed at it */
    uint64_t unfollowable, device_launch;
    uint32_t synced_seq;            /* control.seq at which no exec can be brought up to date; odd = none (atomic) */
};
extern struct gpupart_graph_book gpupart_graph_book;

/* The counts into the slot (counters.graph_*). */
void gpupart_graph_book_publish(struct gpupart_slot_file* slot);

/* Adopts the control block's generation if it is newer than the follower's; every exec that does not
 * carry it is stale again. */
void gpupart_graph_book_adopt(uint64_t generation);

/* A new exec of `graph`, instantiated with `flags` (CUgraphInstantiate_flags) in the calling thread's
 * context, whose descriptors carry (or get at their upload) the mask of control generation `dated`. 1 when
 * it is recorded, 0 when it is not (out of memory: counted as an error). */
int gpupart_graph_book_instantiated(struct gpupart_slot_file* slot, void* exec, void* graph, uint64_t flags, uint64_t dated);

/* The application destroys an exec; a graph (its argument may be replaced by a stand-in of the shim's). */
void gpupart_graph_book_exec_destroyed(void* exec);
void gpupart_graph_book_graph_destroyed(void** graph_argument);

/* A context may be going away with its execs: no exec known so far is the re-mask thread's any more. */
void gpupart_graph_book_contexts_going(void);

/* The record of `exec`, made (as one the shim did not see instantiated) when it has none; NULL when out of memory. */
struct exec_record* gpupart_graph_book_find(void* exec);

/* An exec the re-mask thread can bring up to date, or NULL. */
struct exec_record* gpupart_graph_book_next_for_thread(void);

/* Whether `rec` neither carries the newest generation nor was tried at it. */
int gpupart_graph_book_stale(const struct exec_record* rec);

/* Re-masks `rec` for the newest generation; `upload`: the thread's, which uploads it too. */
void gpupart_graph_book_bring_up_to_date(struct gpupart_slot_file* slot, struct exec_record* rec, int upload);

/* Every exec carries the newest mask or was tried at it: launches skip the follower until control.seq moves. */
void gpupart_graph_book_mark_synced_if_done(uint32_t seq);

#endif /* GPUPART_GRAPH_RECORDS_H */
