/*
 * Keeps a process alive when its mapped slot file is truncated under it.
 *
 * A MAP_SHARED mapping of a file that someone shrinks raises SIGBUS at the next access: without this,
 * anyone who may write a slot (its owner, root, the admin group of an installed registry) could kill the
 * CUDA process behind it. The shim cannot give up the mapping (the launch path reads the control block
 * with one load, no system call), so it guards it: a SIGBUS whose fault address lies in the slot's page
 * is answered by mapping a private page at the same address, filled with the header and the last control
 * block the process adopted, and the faulting instruction runs again on that page. The process keeps its
 * last mask (it can no longer be changed or seen: the slot is gone) and says so once on stderr. Any other
 * SIGBUS goes to the handler that was there before, or kills the process as it always would have.
 * Limits: a host that later installs its own SIGBUS handler without chaining replaces this one.
 */
#ifndef GPUPART_SLOT_GUARD_H
#define GPUPART_SLOT_GUARD_H

#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Guards `slot` (one mapped slot page) from now on; installs the handler once per process. 0 or -errno. */
int gpupart_slot_guard(struct gpupart_slot_file* slot);

/* Remembers the control block the process now applies (call where it adopts one; not async-signal
 * context). A lost slot is replaced with the last one remembered. */
void gpupart_slot_guard_remember(const struct gpupart_control* adopted);

/* Nonzero once the guarded slot was lost (truncated) and replaced by a private page. */
int gpupart_slot_guard_lost(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SLOT_GUARD_H */
