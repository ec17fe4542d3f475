/*
 * The CUDA-graph follower's records (graph_records.h). Every function here runs under the book's lock,
 * with the calling thread's callbacks off (t_in_shim in gpupart_shim_graphs.c), so the driver calls it
 * makes (graph_nodes.c) come back to no callback of ours.
 */
#include "graph_records.h"

#include <stdlib.h>

#include "registry_seqlock.h"

struct gpupart_graph_book gpupart_graph_book = {.lock = PTHREAD_MUTEX_INITIALIZER, .synced_seq = 1u};
#define BOOK gpupart_graph_book

struct graph_record {
    void* graph;
    uint32_t live_execs;
    uint32_t held;              /* the application destroyed it; the shim keeps it for its execs */
};

#define INSTANTIATE_FLAG_DEVICE_LAUNCH 4ull

void gpupart_graph_book_publish(struct gpupart_slot_file* slot) {
    gpupart_store64(&slot->counters.graph_generation, BOOK.latest_generation);
    gpupart_store64(&slot->counters.graph_execs, BOOK.execs.size);
    gpupart_store64(&slot->counters.graph_current, BOOK.current);
    gpupart_store64(&slot->counters.graph_unfollowable, BOOK.unfollowable);
    gpupart_store64(&slot->counters.graph_device_launch, BOOK.device_launch);
}

static void forget_exec(struct exec_record* rec) {
    if (rec->generation == BOOK.latest_generation) --BOOK.current;
    if (rec->failed_generation == BOOK.latest_generation && rec->generation != BOOK.latest_generation) --BOOK.failed_at_latest;
    if (rec->unfollowable != FOLLOWED) --BOOK.unfollowable;
    if (rec->device_launch) --BOOK.device_launch;
    free(rec->nodes);
    free(rec);
}

static void set_unfollowable(struct exec_record* rec, uint32_t why) {
    if (rec->unfollowable == FOLLOWED) ++BOOK.unfollowable;
    rec->unfollowable = why;
}

void gpupart_graph_book_adopt(uint64_t generation) {
    /* Generations only grow; an older one (the slot guard's copy of an older block) changes nothing. */
    if (generation <= BOOK.latest_generation) return;
    BOOK.latest_generation = generation;
    BOOK.current = 0;
    BOOK.failed_at_latest = 0;
    for (size_t i = 0; i < BOOK.execs.capacity; ++i)
        if (BOOK.execs.keys[i] != NULL && ((struct exec_record*)BOOK.execs.values[i])->generation == generation) ++BOOK.current;
    __atomic_store_n(&BOOK.synced_seq, 1u, __ATOMIC_RELAXED);
}

/* Forgets an exec (destroyed, or its address reused by the driver) and releases its graph: a graph the
 * application destroyed while this exec lived is destroyed with its last exec. */
static void drop_exec(struct exec_record* rec) {
    struct graph_record* graph_rec = rec->graph != NULL ? gpupart_table_find(&BOOK.graphs, rec->graph) : NULL;
    forget_exec(rec);
    if (graph_rec == NULL || --graph_rec->live_execs > 0) return;
    gpupart_table_remove(&BOOK.graphs, graph_rec->graph);
    if (graph_rec->held) gpupart_graph_destroy(graph_rec->graph); /* the application's destroy, deferred */
    free(graph_rec);
}

int gpupart_graph_book_instantiated(struct gpupart_slot_file* slot, void* exec, void* graph, uint64_t flags, uint64_t dated) {
    /* An exec the shim still knows at this address was destroyed unseen: forget it first, so that the graph
     * record looked up next is not one that forgetting it frees. */
    struct exec_record* previous = gpupart_table_remove(&BOOK.execs, exec);
    if (previous != NULL) drop_exec(previous);
    struct exec_record* rec = calloc(1, sizeof *rec);
    struct graph_record* graph_rec = gpupart_table_find(&BOOK.graphs, graph);
    if (graph_rec == NULL && (graph_rec = calloc(1, sizeof *graph_rec)) != NULL) {
        graph_rec->graph = graph;
        if (gpupart_table_put(&BOOK.graphs, graph, graph_rec) != 0) {
            free(graph_rec);
            graph_rec = NULL;
        }
    }
    if (rec == NULL || graph_rec == NULL) {
        free(rec);
        gpupart_add64(&slot->counters.errors, 1); /* out of memory: this exec is not followed */
        return 0;
    }
    rec->exec = exec;
    rec->graph = graph;
    rec->context = gpupart_graph_current_context();
    rec->generation = dated; /* the newest when its upload is still to come: a newer mask then gets it anyway */
    rec->device_launch = (flags & INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0;
    size_t capacity = 0;
    rec->unfollowable = gpupart_graph_collect(graph, &rec->nodes, &rec->node_count, &capacity);
    if (rec->unfollowable != FOLLOWED) ++BOOK.unfollowable;
    if (rec->device_launch) ++BOOK.device_launch;
    if (dated == BOOK.latest_generation) ++BOOK.current; /* counted before anything may forget it */
    /* Stale from birth (a change came while it was being instantiated and uploaded): its launches must take
     * the slow path again, which re-masks it, even if nothing else is stale. */
    else __atomic_store_n(&BOOK.synced_seq, 1u, __ATOMIC_RELAXED);
    if (gpupart_table_put(&BOOK.execs, rec->exec, rec) != 0) {
        rec->graph = NULL; /* its graph record does not count it */
        forget_exec(rec);
        gpupart_add64(&slot->counters.errors, 1);
        return 0;
    }
    ++graph_rec->live_execs;
    return 1;
}

void gpupart_graph_book_exec_destroyed(void* exec) {
    struct exec_record* rec = gpupart_table_remove(&BOOK.execs, exec);
    if (rec != NULL) drop_exec(rec);
}

/* If execs made from the graph live on, their node handles must stay valid, so the driver gets an empty
 * graph of ours to destroy instead. */
void gpupart_graph_book_graph_destroyed(void** graph_argument) {
    struct graph_record* graph_rec = gpupart_table_find(&BOOK.graphs, *graph_argument);
    if (graph_rec == NULL || graph_rec->held) return;
    void* stand_in = NULL;
    if (graph_rec->live_execs > 0 && gpupart_graph_create_stand_in(&stand_in) == 0 && stand_in != NULL) {
        *graph_argument = stand_in;
        graph_rec->held = 1;
        return;
    }
    for (size_t i = 0; i < BOOK.execs.capacity; ++i) { /* could not keep it: its execs cannot be reached any more */
        struct exec_record* rec = BOOK.execs.values[i];
        if (BOOK.execs.keys[i] != NULL && rec->graph == graph_rec->graph) {
            set_unfollowable(rec, GRAPH_LOST);
            rec->node_count = 0;
            rec->graph = NULL; /* the driver may reuse the address for another graph */
        }
    }
    gpupart_table_remove(&BOOK.graphs, graph_rec->graph);
    free(graph_rec);
}

void gpupart_graph_book_contexts_going(void) {
    for (size_t i = 0; i < BOOK.execs.capacity; ++i)
        if (BOOK.execs.keys[i] != NULL) ((struct exec_record*)BOOK.execs.values[i])->context = NULL;
    gpupart_graph_forget_streams();
}

struct exec_record* gpupart_graph_book_find(void* exec) {
    struct exec_record* rec = gpupart_table_find(&BOOK.execs, exec);
    if (rec != NULL || (rec = calloc(1, sizeof *rec)) == NULL) return rec;
    rec->exec = exec; /* instantiated where the shim could not see */
    if (gpupart_table_put(&BOOK.execs, exec, rec) != 0) {
        free(rec);
        return NULL;
    }
    set_unfollowable(rec, UNSEEN);
    return rec;
}

int gpupart_graph_book_stale(const struct exec_record* rec) {
    return rec->generation != BOOK.latest_generation && rec->failed_generation != BOOK.latest_generation;
}

struct exec_record* gpupart_graph_book_next_for_thread(void) {
    for (size_t i = 0; i < BOOK.execs.capacity; ++i) {
        struct exec_record* rec = BOOK.execs.values[i];
        /* Not an exec made for device launch: kernels on the application's streams may launch it from the
         * device at any time, and nothing would order the thread's upload after them. Its host launches
         * re-mask it instead. */
        if (BOOK.execs.keys[i] != NULL && rec->context != NULL && !rec->device_launch && gpupart_graph_book_stale(rec) &&
            (rec->unfollowable == FOLLOWED || rec->unfollowable == CONDITIONAL_BODIES || rec->unfollowable == REMASK_REFUSED))
            return rec;
    }
    return NULL;
}

/* An upload that fails leaves the rebuild to the application's replay, with the new mask all the same. */
void gpupart_graph_book_bring_up_to_date(struct gpupart_slot_file* slot, struct exec_record* rec, int upload) {
    int done = 0;
    if (rec->unfollowable == FOLLOWED) {
        done = gpupart_graph_toggle(rec->exec, rec->nodes, rec->node_count) == 0;
        if (!done) {
            gpupart_add64(&slot->counters.graph_remask_failures, 1);
            set_unfollowable(rec, REMASK_REFUSED);
        }
    } else if (rec->unfollowable == CONDITIONAL_BODIES || rec->unfollowable == REMASK_REFUSED) {
        gpupart_graph_toggle(rec->exec, rec->nodes, rec->node_count); /* what can be reached still moves; the rest is reported */
    }
    if (upload && rec->node_count > 0) gpupart_graph_upload(rec->context, rec->exec);
    if (done) {
        rec->generation = BOOK.latest_generation;
        ++BOOK.current;
        gpupart_add64(&slot->counters.graph_remasks, 1);
    } else {
        rec->failed_generation = BOOK.latest_generation;
        ++BOOK.failed_at_latest;
    }
}

void gpupart_graph_book_mark_synced_if_done(uint32_t seq) {
    if (BOOK.current + BOOK.failed_at_latest >= BOOK.execs.size) __atomic_store_n(&BOOK.synced_seq, seq, __ATOMIC_RELEASE);
}
