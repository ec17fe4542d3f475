// gpupart slurm place: a job step's TPCs, MPS and environment, for the SPANK plugin (slurm_place.hpp).
#include "slurm_place.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "controller/job_placement.hpp"
#include "controller/job_rules.hpp"
#include "controller/rules.hpp"
#include "controller/start_plan.hpp"
#include "controller/slurm_gres.hpp"
#include "exit_codes.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "platform/mps_control.hpp"
#include "platform/mps_units.hpp"
#include "platform/process_identity.hpp"
#include "registry/registry.hpp"
#include "registry/registry_layout.h"

namespace gpupart::cli {
namespace {

std::string step_display(const std::string& step) {
    const std::string job = job_of_step(step);
    return fmt::format("{} step {}", job_display(job), one_line(std::string_view(step).substr(job.size() + 1), 20));
}

// The GPU a tpc type names: "gpu<index>", or the only GPU when gres.conf gave tpc no type.
const Gpu& gpu_of_type(const ChosenSnapshot& chosen, const std::string& type) {
    std::optional<int> index = gpu_index_of_tpc_type(type);
    if (!index && type.empty() && chosen.snapshot.gpus.size() == 1) index = 0;
    if (!index)
        throw UserError(fmt::format("the tpc type '{}' names no GPU: gres.conf must give each GPU's TPCs Type=gpu<index> "
                                    "(`gpupart slurm conf` prints the lines)", one_line(type, 40)));
    if (*index >= static_cast<int>(chosen.snapshot.gpus.size()))
        throw UserError(fmt::format("the tpc type '{}' names GPU {}, but this node has {} GPU{} ({}): gres.conf does not "
                                    "match the node (`gpupart slurm conf` prints the lines)", one_line(type, 40), *index,
                                    chosen.snapshot.gpus.size(), chosen.snapshot.gpus.size() == 1 ? "" : "s", chosen.origin));
    const Gpu& gpu = select_gpu(chosen, *index);
    if (!mask_bits_known(gpu))
        throw UserError(fmt::format("GPU {}'s TPC mask bits are not known ({}): its TPCs cannot be placed", gpu.index,
                                    mask_bits_unknown_reason(gpu)));
    return gpu;
}

// The pipe directory of the MPS daemon serving `gpu`, started the way `gpupart mps start` does when this
// GPU has no daemon of its own; "" with a warning in `lines` when none runs. A job with part of a GPU
// shares it with the jobs that come later: without MPS their contexts would time-slice the GPU.
std::string join_mps(const Gpu& gpu, std::vector<std::string>& lines) {
    const auto warn = [&](const std::string& why) {
        lines.push_back(fmt::format("warning: {}: jobs sharing GPU {} time-slice it instead of running side by side [no-mps; "
                                    "Bakita & Anderson, RTAS 2024, rule R4]", why, gpu.index));
        return std::string();
    };
    MpsDirectories dirs;
    try {
        dirs = mps_directories(gpu.uuid.value.value_or(""));
    } catch (const UserError& error) {
        return warn(one_line(error.what()));
    }
    if (const MpsState state = mps_status(dirs.pipe); state.control_running) return state.pipe_directory;
    if (!dirs.unit.empty()) return warn(fmt::format("the GPU's MPS daemon is not running (systemctl start {})", dirs.unit));
    try {
        mps_start();
    } catch (const UserError& error) {
        // Two jobs starting together both find no daemon and both start one: the loser joins the winner's
        // (seen on the H200: "An instance of this daemon is already running").
        if (const MpsState state = mps_status(dirs.pipe); state.control_running) return state.pipe_directory;
        return warn(fmt::format("MPS is not running and could not be started ({})", one_line(error.what(), 160)));
    }
    const MpsState state = mps_status(dirs.pipe);
    return state.control_running ? state.pipe_directory : warn("MPS was started but does not answer: " + state.detail);
}

// What the rules say about the GPU with the job on it, as `gpupart run` says it for a new process.
std::vector<std::string> placement_warnings(const JobPlacement& placed, const SlurmPlaceRequest& request, bool mps_tried,
                                            bool mps_running) {
    SystemState with_mps = placed.state;
    with_mps.mps_running = with_mps.mps_running || mps_running;
    const StartPlan plan = plan_start(with_mps, Newcomer{request.uid, step_display(request.step),
                                                         request.step, placed.tpcs});
    std::vector<std::string> lines;
    // Only what the job brings (as a plan marks what is new): other jobs' findings are not this job's to read.
    const std::vector<Finding> before = check_result(placed.state);
    for (Finding finding : plan.findings) {
        if (finding.severity == Severity::info) continue;
        if (std::find(before.begin(), before.end(), finding) != before.end()) continue;
        if (placed.joined && finding.id == "overlap") continue;  // the job's own steps share its TPCs on purpose
        if (finding.id == "no-mps" && mps_tried) continue;  // join_mps said why there is none
        for (auto at = finding.message.find("the new process"); at != std::string::npos; at = finding.message.find("the new process"))
            finding.message.replace(at, 15, "this job");
        lines.push_back(finding_line(finding));
    }
    return lines;
}

}  // namespace

int run_slurm_place(const SlurmPlaceRequest& request) {
    const std::vector<TpcGres> gres = parse_tpc_gres(request.gres);
    if (gres.empty()) {  // no TPCs here (a count of 0): the plugin treats the step as one that asked none
        fmt::print("notpc\nok\n");
        return kExitOk;
    }
    const auto start = process_start_time(request.holder_pid);
    if (!start) throw UserError(fmt::format("the step's slurmstepd (pid {}) is not running", request.holder_pid));
    const JobStep step{request.step, request.uid, JobHolder{request.holder_pid, *start, request.step}};
    const ChosenSnapshot chosen = load_chosen(request.snapshot);
    const Registry registry(Registry::default_directory(), chosen.snapshot.gpus);
    std::vector<std::string> tpcs, real, visible, lines, logged;
    std::string mps_pipe;
    try {
        for (const TpcGres& wanted : gres) {
            const Gpu& gpu = gpu_of_type(chosen, wanted.type);
            const JobPlacement placed = place_job(registry, gpu, step, wanted.count);
            for (const std::string& note : placed.notes) lines.push_back(one_line(note));
            for (const std::string& line : placed.swept) logged.push_back(fmt::format("{} on {}", one_line(line), gpu_key(gpu)));
            lines.push_back(fmt::format("{}: TPCs {} on GPU {} ({}, {}): {} TPCs, {} SMs{}", step_display(request.step),
                                        placed.tpcs.to_list(), gpu.index, gpu_display_name(gpu), gpu_key(gpu),
                                        placed.tpcs.count(), sms_of(gpu, placed.tpcs).size(),
                                        placed.joined ? ", the job's (placed for an earlier step)" : ", GPC-packed"));
            const bool partial = placed.tpcs.count() < real_tpcs(gpu).count();
            const bool mps_tried = request.mps && partial;
            const std::string pipe = mps_tried ? join_mps(gpu, lines) : std::string();
            if (mps_pipe.empty()) mps_pipe = pipe;
            else if (!pipe.empty() && pipe != mps_pipe)
                lines.push_back(fmt::format("warning: GPU {}'s MPS daemon ({}) is not the one the tasks use ({}): one "
                                            "CUDA_MPS_PIPE_DIRECTORY serves a process", gpu.index, pipe, mps_pipe));
            for (const std::string& warning : placement_warnings(placed, request, mps_tried, !pipe.empty())) lines.push_back(warning);
            tpcs.push_back(fmt::format("{}={}", gpu_key(gpu), descriptor_hex(gpu, placed.tpcs)));
            real.push_back(fmt::format("{}={}", gpu_key(gpu), descriptor_hex(gpu, real_tpcs(gpu))));
            visible.push_back(gpu_key(gpu));
        }
    } catch (const UserError&) {
        // All of the job's TPCs or none: what this step placed on other GPUs goes back.
        release_job_step(registry, step.holder);
        throw;
    }
    for (const std::string& line : lines) fmt::print(stderr, "gpupart: {}\n", line);
    for (const std::string& line : logged) fmt::print("log {}\n", line);
    fmt::print("prepend LD_PRELOAD={}\n", find_shim());
    fmt::print("set {}={}\n", GPUPART_ENV_TPCS, fmt::join(tpcs, ";"));
    fmt::print("set {}={}\n", GPUPART_ENV_REAL_TPCS, fmt::join(real, ";"));
    fmt::print("set {}={}\n", GPUPART_ENV_JOB, request.step);
    fmt::print("set {}={}\n", GPUPART_ENV_REGISTRY_DIR, registry.directory());
    // The tasks see the GPUs they have TPCs on, by UUID, as `gpupart run --only` shows a command its GPU.
    fmt::print("set CUDA_VISIBLE_DEVICES={}\n", fmt::join(visible, ","));
    // An MPS client gets 2 channels otherwise (Bakita & Anderson, ECRTS 2025, pitfall 4); a job's own choice is kept.
    fmt::print("default CUDA_DEVICE_MAX_CONNECTIONS=8\n");
    if (!mps_pipe.empty()) fmt::print("set CUDA_MPS_PIPE_DIRECTORY={}\n", mps_pipe);
    fmt::print("ok\n");
    return kExitOk;
}

}  // namespace gpupart::cli
