#include "controller/system_state.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "controller/job_placement.hpp"
#include "controller/job_rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/pid.hpp"
#include "model/user_error.hpp"
#include "platform/mps_control.hpp"
#include "platform/mps_log.hpp"
#include "platform/mps_units.hpp"
#include "platform/process_identity.hpp"

namespace gpupart {

bool in_group(const std::string& group) {
    struct group entry {};
    struct group* found = nullptr;
    std::vector<char> buffer(16384);
    if (::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return false;
    if (::getegid() == found->gr_gid) return true;
    const int count = ::getgroups(0, nullptr);
    if (count <= 0) return false;
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    const int got = ::getgroups(count, groups.data());
    for (int i = 0; i < got; ++i)
        if (groups[static_cast<std::size_t>(i)] == found->gr_gid) return true;
    return false;
}

namespace {

std::optional<UnreadableSlot> unreadable_slot(const RegistryEntry& entry) {
    if (entry.stranger) return std::nullopt;  // another user's file named after a process: not its slot
    UnreadableSlot slot{entry.path, entry.problem, std::nullopt};
    // The name is <pid>-<start time>.slot: where it is one, a slot of an exited process is only garbage.
    const std::string name = std::filesystem::path(entry.path).filename().string();
    const auto dash = name.find('-');
    const auto dot = name.rfind(".slot");
    if (dash == std::string::npos || dot == std::string::npos || dot <= dash + 1) return slot;
    const std::string start = name.substr(dash + 1, dot - dash - 1);
    if (start.find_first_not_of("0123456789") != std::string::npos || start.size() > 20) return slot;
    try {
        slot.pid = parse_pid(std::string_view(name).substr(0, dash));
    } catch (const UserError&) {
        return slot;
    }
    std::uint64_t start_time = 0;
    std::from_chars(start.data(), start.data() + start.size(), start_time);
    if (process_liveness(*slot.pid, start_time) != Liveness::alive) return std::nullopt;
    // Outside any user directory (the sticky root: anybody's), a file is that process's only if its
    // user (or root) made it: an older shim's slot, not one planted after another user's process.
    if (!entry.dir_uid) {
        struct stat info {};
        const auto runner = process_uid(*slot.pid);
        if (::lstat(entry.path.c_str(), &info) != 0 || (info.st_uid != 0 && (!runner || *runner != info.st_uid)))
            return std::nullopt;
    }
    return slot;
}

}  // namespace

namespace {

// The GPU's processes by the live driver's or NVML's word (never a recording's: those pids are another
// machine's) that are alive and have no slot: no mask holds them. MPS servers run clients' kernels under
// the clients' masks, so they are not among them.
std::vector<UnconfinedProcess> unconfined_processes(const SystemState& state, const std::vector<RegistryEntry>& entries) {
    std::vector<UnconfinedProcess> out;
    for (const Process& process : state.gpu.processes) {
        if (process.from.source == Source::recorded || process.from.source == Source::literature || process.pid <= 0) continue;
        const bool registered = std::any_of(entries.begin(), entries.end(), [&](const RegistryEntry& entry) {
            return entry.record && entry.liveness == Liveness::alive && entry.record->pid == process.pid;
        });
        const bool mps_server = std::find(state.mps_server_pids.begin(), state.mps_server_pids.end(), process.pid) !=
                                state.mps_server_pids.end();
        if (registered || mps_server) continue;
        const bool alive = process.start_time ? process_liveness(process.pid, *process.start_time) == Liveness::alive
                                              : std::filesystem::exists(fmt::format("/proc/{}", process.pid));
        if (!alive) continue;
        out.push_back({process.pid, process.uid, process.command});
    }
    return out;
}

}  // namespace

// The shim's word and sentence for `r` on GPU `uuid`, and its facts there.
void describe_process_on_gpu(const SlotRecord& r, const std::string& uuid, ProcessState& process) {
    process.shim_version = r.shim_version;
    process.start_rule = r.start_rule;
    process.simulated = r.shim_version.starts_with("demo");
    process.writer_died = r.writer_died;
    process.launches_all_gpus = r.counters.launches;
    process.last_launch_ns = r.counters.last_launch_ns;
    process.errors = r.counters.errors;
    process.refused_masks = r.counters.refused_masks;
    process.graph_launches = r.counters.graph_launches;
    if (r.control) {
        process.written_ns = r.control->written_ns;
        process.writer_pid = r.control->writer_pid;
    }
    process.applied = applied_text(r, uuid);
    process.pending = mask_change_pending(r, uuid);
    const GpuStatus* here = r.status ? r.status->gpu(uuid) : nullptr;
    process.has_context = here != nullptr;
    const gpupart_shim_state process_state = r.status ? r.status->state : GPUPART_SHIM_WAITING;
    // A setup failure is the process's whatever the GPU; otherwise this GPU's entry says it.
    const bool setup_failed = process_state == GPUPART_SHIM_CALLBACK_FAILED || process_state == GPUPART_SHIM_BAD_ENVIRONMENT;
    gpupart_shim_state state = process_state;
    if (!setup_failed && here != nullptr && !here->publishing) state = here->state;
    else if (!setup_failed && here == nullptr && process_state != GPUPART_SHIM_GPU_UNKNOWN) state = GPUPART_SHIM_WAITING;
    if (here != nullptr) {
        process.descriptor_version = here->descriptor_version;
        process.launches = here->launches;
        process.masked_launches = here->masked_launches;
        process.applied_ns = here->applied_ns;
    }
    process.shim_code = static_cast<int>(state);
    process.shim_sentence = std::string(to_string(state));
    process.shim_problem = true;
    switch (state) {
        case GPUPART_SHIM_WAITING:
            process.shim_word = "waiting";
            process.shim_sentence = r.counters.launches > 0 ? "no kernel launched on this GPU yet (it launches on another)"
                                                            : std::string(to_string(state));
            process.shim_problem = false;
            break;
        case GPUPART_SHIM_ACTIVE:
            process.shim_word = process.pending ? "pending" : "active";
            if (process.pending) process.shim_sentence = "a changed mask applies at the process's next launch on this GPU";
            process.shim_problem = false;
            break;
        case GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR: process.shim_word = "passthru"; break;
        case GPUPART_SHIM_CALLBACK_FAILED: process.shim_word = "passthru"; break;
        case GPUPART_SHIM_MASK_REFUSED: process.shim_word = "refused"; break;
        case GPUPART_SHIM_BAD_ENVIRONMENT: process.shim_word = "bad env"; break;
        case GPUPART_SHIM_NO_MASK_FOR_GPU: process.shim_word = "unconfined"; break;
        case GPUPART_SHIM_GPU_UNKNOWN: process.shim_word = "unknown gpu"; break;
    }
    if (here != nullptr && here->publishing) process.shim_sentence = "the shim is publishing its status on this GPU";
}

// The running server's fatal errors from the daemon's logs. A log gpupart cannot read (not there, a FIFO, no
// permission) is said in the state, never taken for "no error".
void gather_mps_log(SystemState& state, const std::string& log_directory, const std::vector<int>& server_pids) {
    state.mps_log_directory = log_directory;
    std::error_code error;
    if (!std::filesystem::exists(state.mps_log_directory + "/control.log", error)) {
        state.mps_log_problem = fmt::format("no control.log in {}; set CUDA_MPS_LOG_DIRECTORY to the MPS daemon's "
                                            "log directory", one_line(state.mps_log_directory));
        return;
    }
    try {
        state.mps_fatal_errors = of_servers(read_mps_fatal_errors(state.mps_log_directory), server_pids);
    } catch (const UserError& e) {
        state.mps_log_problem = e.what();
    }
}

void gather_jobs(SystemState& state, const std::string& registry_root, const std::vector<RegistryEntry>& entries) {
    try {
        state.jobs = read_job_reservations(registry_root, state.gpu_uuid, numberings_of({state.gpu}));
        // A killed slurmstepd's reservation holds nothing until the next placement sweeps it from the file.
        sweep_stale_jobs(state.jobs, entries);
        trust_job_claims(state);
    } catch (const UserError& error) {
        state.jobs_problem = one_line(error.what());
    }
}

SystemState gather_state(const Registry& registry, const Gpu& gpu, const std::string& admin_group) {
    const std::vector<RegistryEntry> entries = registry.list();
    SystemState state = gather_state(entries, gpu, admin_group);
    gather_jobs(state, registry.directory(), entries);
    state.smlp_read_ns = realtime_now_ns();
    try {
        state.smlp = list_smlp_components(registry.directory());
    } catch (const UserError& problem) {  // the processes were read: a component listing never hides them
        state.smlp_problem = one_line(problem.what());
    }
    return state;
}

SystemState gather_state(const std::vector<RegistryEntry>& entries, const Gpu& gpu, const std::string& admin_group) {
    SystemState state;
    state.gpu = gpu;
    state.gpu_uuid = gpu_key(gpu);
    for (const auto& entry : entries) {
        if (!entry.record) {
            if (auto slot = unreadable_slot(entry)) state.unreadable.push_back(std::move(*slot));
            continue;
        }
        if (entry.liveness != Liveness::alive) continue;
        const SlotRecord& r = *entry.record;
        const bool here = counts_on_gpu(r, state.gpu_uuid);
        ProcessState process;
        std::optional<TpcMask> unnumbered_bits;
        process.gpus = gpus_of(r);
        process.pid = r.pid;
        process.start_time = r.start_time;
        process.uid = r.uid;
        process.command = r.command;
        process.job = r.job;
        if (r.control) {
            if (const GpuControl* mine = r.control->gpu(state.gpu_uuid); mine != nullptr && mine->has_mask) {
                process.partitioned = true;
                // Descriptor bits the registry could not number (this GPU's map is not known) are no TPC numbers:
                // the process holds TPCs nobody here can name, said below, never bits read as numbers.
                if (mine->numbered) process.mask = mine->allowed;
                else unnumbered_bits = mine->allowed;
            }
            process.generation = r.control->generation;
        }
        process.graphs = graph_status(r);
        process.app = r.app;
        describe_process_on_gpu(r, state.gpu_uuid, process);
        if (unnumbered_bits) {
            process.shim_word = "bits";
            process.shim_sentence = fmt::format("confined to launch-descriptor bits:{} of this GPU, whose map of TPC numbers is not "
                                                "known here (run `gpupart probe`)", unnumbered_bits->to_hex());
            process.shim_problem = true;
        }
        (here ? state.processes : state.elsewhere).push_back(std::move(process));
    }
    // The daemon of this GPU: its own unit's (gpupart-mps@<uuid>.service) where there is one.
    const MpsDirectories mps_dirs = mps_directories(gpu.uuid.value.value_or(""));
    const MpsState mps = mps_status(mps_dirs.pipe);
    state.mps_running = mps.control_running;
    state.mps_pipe_directory = mps.pipe_directory;  // as the daemon was found (the default when no unit names one)
    state.mps_server_pids = mps.server_pids;
    state.mps_static_partitioning = mps.static_partitioning;
    if (mps.control_running) gather_mps_log(state, mps_dirs.log, mps.server_pids);
    state.unconfined = unconfined_processes(state, entries);
    state.caller_uid = ::geteuid();
    state.caller_admin = state.caller_uid == 0 || in_group(admin_group);
    return state;
}

const ProcessState* find_process(const SystemState& state, int pid) {
    for (const auto& process : state.processes)
        if (process.pid == pid) return &process;
    return nullptr;
}

}  // namespace gpupart
