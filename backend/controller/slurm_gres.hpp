#pragma once
// Slurm's side of TPCs as a resource (docs/slurm.md): the generic resource `tpc`, one Type per
// GPU named after gpupart's GPU index ("gpu0", "gpu1", ...) with Count = that GPU's real TPCs, so Slurm
// counts TPCs per GPU and queues jobs that do not fit; the SPANK plugin places the counts Slurm allocated.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

// TPCs Slurm allocated a job on one node, of one tpc type (empty: gres.conf gave tpc no Type).
struct TpcGres {
    std::string type;
    int count = 0;
    bool operator==(const TpcGres&) const = default;
};

// The tpc entries of one node's GRES detail as slurm_load_job gives it (job_info.gres_detail_str[node],
// `scontrol show -d job`'s "GRES="): "tpc:gpu0(CNT:16),tpc:gpu1(CNT:4),gpu:a100:1(IDX:0,2)". Other
// resources are skipped; a type named twice is added up; a zero count is left out. Throws UserError
// (one line) for a tpc entry whose count cannot be read.
std::vector<TpcGres> parse_tpc_gres(std::string_view detail);

// The GPU index a tpc type names ("gpu3" -> 3); nullopt for anything else.
std::optional<int> gpu_index_of_tpc_type(std::string_view type);

// The gres.conf and slurm.conf lines for node `node` with `gpus` (gpupart's order), and the plugstack
// line loading `plugin`; comments say where each goes.
std::string slurm_conf_text(const std::vector<Gpu>& gpus, const std::string& node, const std::string& plugin);

}  // namespace gpupart
