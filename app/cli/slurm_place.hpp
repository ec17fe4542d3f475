#pragma once
// `gpupart slurm place`: what the SPANK plugin (app/slurm/gpupart_spank.c) runs in slurmstepd, as root,
// before a step's tasks start. It places the TPCs Slurm allocated the job on this node (the node's GRES
// detail: one tpc type per GPU), joins or starts each GPU's MPS daemon when the job does not have the
// whole GPU, and answers the plugin in a small line protocol (docs/slurm.md, "How the plugin works"):
//   stdout  "set NAME=VALUE"      the tasks' environment gets NAME=VALUE
//           "default NAME=VALUE"  ... unless the job set NAME itself
//           "prepend NAME=VALUE"  ... VALUE in front of NAME's value, ':'-separated (LD_PRELOAD)
//           "log TEXT"            for the node's log, not the job (other jobs' TPCs swept on the way)
//   stderr  one line each for the job's stderr: where its TPCs are, warnings
//           "ok"                  last: the answer is whole (the plugin requires it)
//   exit    0 placed (or no tpc in the GRES: "ok" alone), 1 refused (one line on stderr)
#include <string>

#include "cli_common.hpp"

namespace gpupart::cli {

struct SlurmPlaceRequest {
    SnapshotOptions snapshot;
    std::string step;     // "slurm:<job>.<step>"
    unsigned uid = 0;     // the job's user
    int holder_pid = 0;   // the slurmstepd of the step
    std::string gres;     // this node's GRES detail of the job ("tpc:gpu0(CNT:16)")
    bool mps = true;      // join or start MPS for a job that does not have a whole GPU
};

int run_slurm_place(const SlurmPlaceRequest& request);

}  // namespace gpupart::cli
