/*
 * The C half of the registry, compiled into both the shim and the backend, so the two can never disagree
 * about the protocol. Depends only on libc and the layout. One header per concern; this one gathers them
 * for the files that use several. Nothing here is called on the shim's launch path except the inline
 * seqlock helpers (registry_seqlock.h).
 */
#ifndef GPUPART_REGISTRY_SLOT_H
#define GPUPART_REGISTRY_SLOT_H

#include "control_seqlock.h"
#include "gpu_mask_text.h"
#include "printable_ascii.h"
#include "registry_dirs.h"
#include "registry_layout.h"
#include "rules_file.h"
#include "slot_create.h"
#include "uuid_text.h"

#endif /* GPUPART_REGISTRY_SLOT_H */
