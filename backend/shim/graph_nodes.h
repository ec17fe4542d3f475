/*
 * The driver calls the CUDA-graph follower makes on graphs and execs (graph_nodes.c): finding an exec's
 * kernel nodes, turning them off and on so the driver rebuilds their descriptors, and uploading an exec
 * on a stream of the shim's own so that the rebuild happens before the application's next replay.
 */
#ifndef GPUPART_GRAPH_NODES_H
#define GPUPART_GRAPH_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

/* Why an exec cannot be re-masked (or FOLLOWED when it can). */
enum gpupart_graph_reach { FOLLOWED = 0, UNSEEN, CONDITIONAL_BODIES, GRAPH_LOST, NODES_UNREADABLE, REMASK_REFUSED };

/* Resolves the driver's graph functions in `libcuda`; 0, or -1 after one line on stderr naming the missing
 * one (graphs then keep the mask of their upload). The upload and context functions are optional: without
 * them only the launch-time re-mask works (gpupart_graph_can_upload says which). */
int gpupart_graph_nodes_resolve(void* libcuda);
int gpupart_graph_can_upload(void);

/* The kernel nodes of `graph` and of its child graphs, appended to `*nodes` (`*count` of `*capacity`).
 * Returns FOLLOWED, or why some kernel nodes cannot be reached (those that can are still appended). */
enum gpupart_graph_reach gpupart_graph_collect(void* graph, void*** nodes, size_t* count, size_t* capacity);

/* Turns every kernel node the application left enabled off and on again: the driver rebuilds their
 * descriptors at the exec's next launch or upload. 0 when every toggle was accepted. */
int gpupart_graph_toggle(void* exec, void* const* nodes, size_t count);

/* The calling thread's current context (NULL when none or unknown). */
void* gpupart_graph_current_context(void);

/* Makes `context` current on the calling thread and uploads `exec` on a stream of the shim's own in it,
 * which rebuilds the descriptors toggled since (with the launch callback writing the mask). 0, or the
 * driver's error. Only the re-mask thread calls this. */
int gpupart_graph_upload(void* context, void* exec);

/* Puts the calling thread's stream-capture mode to relaxed: its calls then never invalidate a capture in
 * progress on another thread (the re-mask thread, once). */
void gpupart_graph_relax_capture(void);

/* Contexts are being destroyed: forget the shim's streams in them (the driver destroys them with it). */
void gpupart_graph_forget_streams(void);

/* An empty graph of the shim's, handed to the application's cuGraphDestroy when its execs must keep their graph alive;
 * 0 when made. And the real destroy of a graph the shim kept. */
int gpupart_graph_create_stand_in(void** graph);
int gpupart_graph_destroy(void* graph);

#endif /* GPUPART_GRAPH_NODES_H */
