#include "controller/rules.hpp"

#include <algorithm>
#include <set>
#include <filesystem>

#include <fmt/format.h>

#include "controller/job_rules.hpp"
#include "controller/mps_findings.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/process_identity.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "report/topology_text.hpp"

namespace gpupart {
namespace {

Finding warning(std::string id, std::string rule, std::string message) {
    return {Severity::warning, std::move(rule), std::move(message), std::move(id)};
}
Finding note(std::string id, std::string rule, std::string message) {
    return {Severity::info, std::move(rule), std::move(message), std::move(id)};
}

std::string mask_text(bool partitioned, const TpcMask& mask) { return partitioned ? mask.to_list() : "all"; }

// pid 0 is a process about to start (gpupart run checks it before it exists).
std::string who(int pid) { return pid == 0 ? std::string("the new process") : fmt::format("process {}", pid); }

// What a change means for the process's CUDA graphs (docs/cuda-graphs.md): the shim re-masks each exec
// at its first launch after the change, except those it cannot reach, which are warned about by name.
void append_graph_change(std::vector<Finding>& findings, const ProcessState& process) {
    const GraphStatus& g = process.graphs;
    if (graphs_not_followed(g)) {
        findings.push_back(warning("graphs-keep-mask", "graphs keep their upload mask (measured)",
                                   fmt::format("process {}: {}", process.pid, graph_sentence(g))));
        return;
    }
    if (g.execs == 0) return;
    if (g.unfollowable > 0)
        findings.push_back(warning("graphs-keep-mask", "docs/cuda-graphs.md",
                                   fmt::format("process {}: {} of its {} CUDA graph {} cannot be re-masked (conditional "
                                               "bodies, lost or refused nodes): {} keep{} the old TPCs until re-instantiated",
                                               process.pid, g.unfollowable, g.execs, g.execs == 1 ? "exec" : "execs",
                                               g.unfollowable == 1 ? "it" : "they", g.unfollowable == 1 ? "s" : "")));
    const std::uint64_t following = g.execs - std::min(g.unfollowable, g.execs);
    if (following == 0) return;
    const bool one = following == 1;
    // With the shim's re-mask thread the change waits for it (Registry::wait_for_graph_remasks); without
    // it, each exec is re-masked inside its first launch after the change.
    if (g.ahead)
        findings.push_back(note("graphs-follow", "docs/cuda-graphs.md",
                                fmt::format("process {}: {} CUDA graph {} {} re-masked before this change returns (at the "
                                            "latest at {} next launch)", process.pid, following, one ? "exec" : "execs",
                                            one ? "is" : "are", one ? "its" : "their")));
    else
        findings.push_back(note("graphs-follow", "docs/cuda-graphs.md",
                                fmt::format("process {}: {} CUDA graph {} take{} the new TPCs at {} next launch", process.pid,
                                            following, one ? "exec" : "execs", one ? "s" : "", one ? "its" : "their")));
}

}  // namespace

SystemState state_after(const SystemState& state, const std::vector<PlannedChange>& changes) {
    SystemState after = state;
    for (const PlannedChange& change : changes) {
        // A process on other GPUs only is on this one once it has a mask here.
        const auto moved = std::find_if(after.elsewhere.begin(), after.elsewhere.end(),
                                        [&](const ProcessState& p) { return p.pid == change.pid; });
        if (moved != after.elsewhere.end() && change.after_partitioned) {
            after.processes.push_back(*moved);
            after.elsewhere.erase(moved);
        }
        for (ProcessState& process : after.processes)
            if (process.pid == change.pid) {
                process.partitioned = change.after_partitioned;
                process.mask = change.after;
            }
    }
    return after;
}

std::vector<Finding> check_change(const SystemState& state, const PlannedChange& change) {
    std::vector<Finding> findings;
    const TpcMask real = real_tpcs(state.gpu);
    if (change.after_partitioned && (change.after & real).empty())
        findings.push_back(refusal("no-real-tpc", "TPC numbers and descriptor holes (measured on the H200)",
                                 fmt::format("{}: mask {} names no TPC this GPU has: its kernels would "
                                             "never run", who(change.pid), change.after.empty() ? "(empty)" : change.after.to_list())));
    if (!state.caller_admin && state.caller_uid != change.uid)
        findings.push_back(refusal("permission", "registry permissions",
                                 fmt::format("process {} belongs to {}: only its owner, root or members of group gpupart "
                                             "may change it", change.pid, user_name(change.uid))));
    for (Finding& finding : check_job_tpcs(state, change)) findings.push_back(std::move(finding));
    if (change.before_partitioned == change.after_partitioned && change.before == change.after)
        findings.push_back(note("no-change", "controller", fmt::format("process {} already has TPCs {}: nothing to change", change.pid,
                                                          mask_text(change.after_partitioned, change.after))));
    if (change.before_partitioned != change.after_partitioned || change.before != change.after)
        if (const ProcessState* process = find_process(state, change.pid)) append_graph_change(findings, *process);
    return findings;
}

std::vector<Finding> check_result(const SystemState& after) { return bounded(every_result_finding(after)); }

std::vector<Finding> every_result_finding(const SystemState& after) {
    std::vector<Finding> findings;
    const TpcMask real = real_tpcs(after.gpu);
    const auto& processes = after.processes;
    for (std::size_t a = 0; a < processes.size(); ++a) {
        if (!processes[a].partitioned) {
            if (processes.size() > 1)
                findings.push_back(warning("unpartitioned", "Bakita & Anderson, ECRTS 2025, section 5",
                                           fmt::format("{} has no partition: it may run on every TPC, including those "
                                                       "given to others", who(processes[a].pid))));
            continue;
        }
        for (std::size_t b = a + 1; b < processes.size(); ++b) {
            if (!processes[b].partitioned) continue;
            const TpcMask shared = processes[a].mask & processes[b].mask & real;
            if (!shared.empty())
                findings.push_back(warning("overlap", "Bakita & Anderson, ECRTS 2025, pitfall 8",
                                           fmt::format("{} and {} share TPCs {}: their kernels compete for those SMs",
                                                       who(processes[a].pid), who(processes[b].pid), shared.to_list())));
        }
    }
    // A split GPC is judged on the GPU as it is, so `gpupart check`, the findings panel and a plan
    // (which checks the state after it) say the same thing about the same masks.
    for (const auto& process : processes) {
        if (!process.partitioned) continue;
        for (const Gpc& gpc : after.gpu.gpcs) {
            const TpcMask all = gpc_tpcs(after.gpu, gpc.index) & real;
            const int used = (all & process.mask).count();
            if (used > 0 && used < all.count())
                findings.push_back(warning("partial-gpc", "Bakita & Anderson, RTAS 2023 (SE-packed)",
                                           fmt::format("{} gets only {} of {}'s {} TPCs: a partition of whole GPCs "
                                                       "shares no GPC with others and interferes less",
                                                       who(process.pid), used, gpc_name(gpc.index), all.count())));
        }
    }
    for (const auto& process : processes) {
        const GraphStatus& g = process.graphs;
        if (graphs_not_followed(g) || g.unfollowable > 0)
            findings.push_back(warning("graphs-keep-mask", "docs/cuda-graphs.md",
                                       fmt::format("{}: {}", who(process.pid), graph_sentence(g))));
        else if (g.older > 0)
            findings.push_back(note("graphs-pending", "docs/cuda-graphs.md", fmt::format("{}: {}", who(process.pid), graph_sentence(g))));
    }
    bool everyone_partitioned = !processes.empty();
    TpcMask used;
    for (const auto& process : processes) {
        everyone_partitioned = everyone_partitioned && process.partitioned;
        used |= process.mask;
    }
    const TpcMask idle = real & ~used;
    // A live process whose slot cannot be read may use any TPC: none is called idle while one is there.
    for (const UnreadableSlot& slot : after.unreadable) {
        const std::string name = one_line(std::filesystem::path(slot.path).filename().string());
        const std::string unknown = idle.empty() ? "" : fmt::format("; TPCs {} are not known to be idle", idle.to_list());
        findings.push_back(warning("unreadable-slot", "registry: a slot is the only record of its process's TPCs",
                                   slot.pid ? fmt::format("process {} is running but its slot {} cannot be read ({}): which TPCs "
                                                          "it uses is unknown{}", *slot.pid, name, one_line(slot.problem), unknown)
                                            : fmt::format("slot {} cannot be read ({}): which process it is and which TPCs it "
                                                          "uses are unknown{}", name, one_line(slot.problem), unknown)));
    }
    // With one process, unused TPCs are most likely room for the next one: a note, not a warning.
    if (everyone_partitioned && !idle.empty() && after.unreadable.empty())
        findings.push_back((processes.size() > 1 ? warning : note)("idle-tpcs", "Bakita & Anderson, ECRTS 2025, pitfall 8",
                                   fmt::format("TPCs {} ({} of {}) are given to no process: they stay idle", idle.to_list(),
                                               idle.count(), real.count())));
    if (processes.size() > 1 && !after.mps_running)
        findings.push_back(warning("no-mps", "Bakita & Anderson, RTAS 2024, rule R4",
                                   fmt::format("{} partitioned processes run without MPS: their contexts time-slice the GPU, "
                                               "so the partitions never run side by side (gpupart mps start)", processes.size())));
    if (after.mps_running && static_cast<int>(processes.size()) > kMpsClientLimit)
        findings.push_back(warning("too-many-mps-clients", "Bakita & Anderson, ECRTS 2025, pitfall 4",
                                   fmt::format("{} partitioned processes: one MPS server serves at most {} clients with "
                                               "CUDA_DEVICE_MAX_CONNECTIONS=8", processes.size(), kMpsClientLimit)));
    if (after.mps_static_partitioning)
        findings.push_back(warning("mps-static-partitioning", "MPS static SM partitioning (measured)",
                                   "MPS static SM partitioning is active: MPS binds each client to its own SMs (chunks of 8), "
                                   "and gpupart's masks can only narrow a client within them"));
    const auto mps = mps_findings(after);
    findings.insert(findings.end(), mps.begin(), mps.end());
    // A process no mask holds runs over every partition: worth saying once the GPU is partitioned at all.
    const bool partitioned_gpu = !after.jobs.empty() || std::any_of(processes.begin(), processes.end(),
                                                                   [](const ProcessState& p) { return p.partitioned; });
    if (partitioned_gpu)
        for (const UnconfinedProcess& process : after.unconfined)
            findings.push_back(warning("unconfined", "Bakita & Anderson, ECRTS 2025, section 5",
                                       fmt::format("process {} ({}{}) uses the GPU without a gpupart partition: it runs on "
                                                   "every TPC, over the partitions of the others (a job that asked no "
                                                   "TPCs, or a program started without `gpupart run`)", process.pid,
                                                   process.uid ? user_name(static_cast<unsigned>(*process.uid)) + ", " : "",
                                                   one_line(process.command.empty() ? "?" : process.command, 40))));
    const auto jobs = job_findings(after);
    findings.insert(findings.end(), jobs.begin(), jobs.end());
    if (processes.size() > 1)
        for (const auto& pair : shared_copy_engines(after.gpu))
            findings.push_back(warning("shared-copy-engines", "Bakita & Anderson, RTAS 2024, rule R8",
                                       fmt::format("LCE{} and LCE{} share PCEs {}: copies of processes on disjoint TPCs "
                                                   "still interfere there", pair.lce_a, pair.lce_b, pair.pce_list())));
    return findings;
}

std::vector<Finding> check_plan(const SystemState& state, const std::vector<PlannedChange>& changes) {
    std::vector<Finding> findings;
    for (const PlannedChange& change : changes) {
        auto more = check_change(state, change);
        for (Finding& finding : more) finding.is_new = true;  // about the change itself
        findings.insert(findings.end(), more.begin(), more.end());
    }
    // The same rules as for the state as it is, on the state after: what they find now too is not new.
    // Compared whole (a finding left out of one list may be in the other), by a set: not pair by pair.
    std::set<std::pair<std::string, std::string>> already;
    for (const Finding& old : every_result_finding(state)) already.emplace(old.id, old.message);
    for (Finding& finding : every_result_finding(state_after(state, changes))) {
        if (!belongs_in_plan(finding)) continue;
        finding.is_new = !already.contains({finding.id, finding.message});
        findings.push_back(std::move(finding));
    }
    return bounded(std::move(findings));
}

}  // namespace gpupart
