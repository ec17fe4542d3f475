/*
 * The shim's CUDA-graph re-mask thread (graph_remasker.c): woken by a change of the process's control
 * block (the front end's futex wake on control.seq), it brings every graph exec up to date ahead of the
 * application's next replay, then publishes counters.graph_settled_generation, which `gpupart set` waits for.
 */
#ifndef GPUPART_GRAPH_REMASKER_H
#define GPUPART_GRAPH_REMASKER_H

#include "registry_layout.h"

/* Whether $GPUPART_GRAPH_REMASK asks for the thread ("ahead", the default) or not ("at-launch"). Anything
 * else is one line on stderr and the default. */
int gpupart_graph_remasker_wanted(void);

/* Starts the thread for `slot` (once the process has a graph exec); 0, or -1 when it could not be made
 * (then execs are re-masked at their first launch, as without it). Publishes counters.graph_remasker. */
int gpupart_graph_remasker_start(struct gpupart_slot_file* slot);

#endif /* GPUPART_GRAPH_REMASKER_H */
