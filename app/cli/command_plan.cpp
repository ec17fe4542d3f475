// gpupart plan --target PID=RATE|PID=SHARE% ...: Zahaf et al.'s (RTNS 2021) partition-and-allocate over the curves that
// `gpupart measure` saved: how many TPCs each process needs for its target, which processes share a
// partition, GPC-packed masks for the partitions, and, when the targets cannot all be met, why and what
// fraction of them can. With --apply the masks go through the controller as one change (one journal
// entry: `gpupart undo` reverts it), printed as `gpupart set` prints a change.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "curve_paths.hpp"
#include "exit_codes.hpp"
#include "controller/profile.hpp"
#include "controller/profile_capture.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "plan_output.hpp"
#include "planner/plan_placement.hpp"
#include "planner/target_text.hpp"
#include "platform/safe_file.hpp"

namespace gpupart::cli {
namespace {

struct PlanOptionsCli {
    SnapshotOptions snapshot;
    std::vector<std::string> targets;
    bool apply = false;
    bool json = false;
    std::string output_profile;
};

struct Planned {
    const ProcessState* process = nullptr;
    ProcessTarget target;
    CurveFit fit;
    Classification classification;
};

std::string target_text(const Target& target) {
    return target.kind == Target::Kind::share ? fmt::format("{:g}% of alone", target.value * 100) : fmt::format("{:g}/s", target.value);
}

// The curve `gpupart measure` saved for the process, fitted again (curve_json.hpp: a file's fit is never trusted).
Planned load_planned(const SystemState& state, const ProcessTarget& target) {
    const ProcessState* process = &measured_process(state, target.pid);
    const auto stored = curve_store().load(curve_identity(*process, state));
    if (!stored)
        throw UserError(fmt::format("process {} ({}) has no measured curve on GPU {}: run `gpupart measure {}` first", target.pid,
                                    one_line(process->command, 60), state.gpu_uuid, target.pid));
    Planned planned{process, target, fit_curve(stored->points), {}};
    planned.classification = classify_measured(stored->points, planned.fit, stored->total_tpcs, stored->memory_throughput);
    return planned;
}

void write_profile(const std::string& path, const std::vector<Planned>& planned, const std::vector<TpcMask>& masks, int gpu_index) {
    Profile profile;
    profile.name = std::filesystem::path(path).stem().string();
    if (!valid_profile_name(profile.name) || std::filesystem::path(path).extension() != ".json")
        throw UserError(fmt::format("--output-profile {}: a profile file is NAME.json with a NAME of letters, digits, '.', '_' and '-'", path));
    profile.description = "gpupart plan: TPCs for measured targets";
    // By command line and user, as the curves are kept: the rules also give processes that start later their TPCs.
    for (std::size_t i = 0; i < planned.size(); ++i)
        profile.rules.push_back({ProfileMatch{std::nullopt, escaped_glob(planned[i].process->command), std::to_string(planned[i].process->uid), std::nullopt},
                                 gpu_index, masks[i].to_list()});
    replace_file(path, profile_text(profile), 0644, "profile");
}

// Every TPC is held by partitioned processes outside the plan: who holds them (most TPCs first) and what to do,
// in one line, instead of planning over nothing.
std::string all_held_text(const SystemState& state, const std::set<int>& planned) {
    std::vector<const ProcessState*> holders;
    for (const ProcessState& other : state.processes)
        if (other.partitioned && !planned.contains(other.pid) && !(other.mask & real_tpcs(state.gpu)).empty()) holders.push_back(&other);
    std::stable_sort(holders.begin(), holders.end(), [](const ProcessState* a, const ProcessState* b) { return a->mask.count() > b->mask.count(); });
    constexpr std::size_t kNamed = 4;
    std::vector<std::string> named;
    for (std::size_t i = 0; i < holders.size() && i < kNamed; ++i)
        named.push_back(fmt::format("{} holds {} ({})", holders[i]->pid, holders[i]->mask.to_list(), one_line(holders[i]->command, 40)));
    if (holders.size() > kNamed) named.push_back(fmt::format("{} more", holders.size() - kNamed));
    return fmt::format("nothing to plan: all {} TPCs of GPU {} are held by processes outside the plan: {}; give some back "
                       "(`gpupart set PID` with fewer TPCs) or add those processes to the plan with a target of their own",
                       real_tpcs(state.gpu).count(), state.gpu_uuid, fmt::join(named, ", "));
}

int run_plan(const PlanOptionsCli& options) {
    std::vector<ProcessTarget> targets;
    std::set<int> seen;
    for (const std::string& text : options.targets) {
        targets.push_back(parse_process_target(text));
        if (!seen.insert(targets.back().pid).second)
            throw UserError(fmt::format("--target names process {} twice: give each process one target", targets.back().pid));
    }
    int gpu_index = 0;
    Controller controller = options.snapshot.gpu.empty() ? make_controller_for_process(options.snapshot, targets.front().pid)
                                                         : make_controller(options.snapshot, &gpu_index);
    const SystemState& state = controller.state();
    if (options.snapshot.gpu.empty())
        for (std::size_t i = 0; i < load_chosen(options.snapshot).snapshot.gpus.size(); ++i)
            if (gpu_key(load_chosen(options.snapshot).snapshot.gpus[i]) == state.gpu_uuid) gpu_index = static_cast<int>(i);
    for (const ProcessTarget& target : targets) measured_process(state, target.pid);  // an unknown pid first
    // The TPCs of partitioned processes left out of the plan stay theirs: the plan shares out the rest.
    TpcMask available = real_tpcs(state.gpu);
    for (const ProcessState& other : state.processes)
        if (other.partitioned && !seen.contains(other.pid)) available &= ~other.mask;
    if (available.empty()) throw UserError(all_held_text(state, seen));
    std::vector<Planned> planned;
    for (const ProcessTarget& target : targets) planned.push_back(load_planned(state, target));
    std::vector<PlanProcess> inputs;
    for (const Planned& p : planned)
        inputs.push_back({fmt::format("process {}", p.process->pid), p.fit.model, p.classification.intensity, std::nullopt, p.target.target});
    PlanOptions plan_options;
    plan_options.whole_gpu_tpcs = real_tpcs(state.gpu).count();  // "50%" is of the rate alone on the whole GPU
    const PartitionPlan plan = plan_partitions(inputs, available.count(), plan_options);
    std::vector<int> sizes;
    for (const PlannedPartition& partition : plan.partitions) sizes.push_back(partition.tpcs);
    const std::vector<TpcMask> partition_masks = sizes.empty() ? std::vector<TpcMask>{} : place_partitions_packed(state.gpu, sizes, available);
    std::vector<TpcMask> masks;  // per process, in target order
    std::vector<MaskRequest> requests;
    for (std::size_t i = 0; i < planned.size(); ++i) {
        const int partition = plan.processes[i].partition;
        masks.push_back(partition >= 0 ? partition_masks[static_cast<std::size_t>(partition)] : TpcMask{});
        if (partition >= 0) requests.push_back({planned[i].process->pid, masks.back(), planned[i].process->start_time});
    }
    const std::string action = fmt::format("plan {}", fmt::join(options.targets, " "));
    const Plan change = requests.empty() ? Plan{} : controller.plan_masks(requests, action);
    if (!options.output_profile.empty() && plan.feasible) write_profile(options.output_profile, planned, masks, gpu_index);

    nlohmann::ordered_json out;
    if (options.json) {
        out = {{"gpu", state.gpu_uuid}, {"total_tpcs", real_tpcs(state.gpu).count()}, {"planned_tpcs", available.count()},
               {"feasible", plan.feasible}, {"reason", plan.feasible ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(plan.reason)},
               {"closest_fraction", plan.closest_fraction}, {"spare_tpcs", plan.spare_tpcs}, {"processes", nlohmann::ordered_json::array()}};
        for (std::size_t i = 0; i < planned.size(); ++i) {
            const PlannedProcess& p = plan.processes[i];
            out["processes"].push_back({{"pid", planned[i].process->pid}, {"command", planned[i].process->command},
                                        {"class", to_string(planned[i].classification.intensity)},
                                        {"target", options.targets[i]}, {"target_rate", p.target_rate}, {"partition", p.partition},
                                        {"tpcs", p.tpcs}, {"mask", p.partition >= 0 ? nlohmann::ordered_json(masks[i].to_list()) : nlohmann::ordered_json(nullptr)},
                                        {"planned_rate", p.planned_rate}, {"model_rate", p.model_rate}, {"in_conflict", p.in_conflict}, {"met", p.met}});
        }
        out["profile"] = !options.output_profile.empty() && plan.feasible ? nlohmann::ordered_json(options.output_profile) : nlohmann::ordered_json(nullptr);
    } else {
        fmt::print("plan over {} TPCs of {} ({}{})\n\n", available.count(), gpu_display_name(state.gpu), state.gpu_uuid,
                   available.count() == real_tpcs(state.gpu).count() ? ""
                       : fmt::format("; the other {} are held by processes outside the plan", real_tpcs(state.gpu).count() - available.count()));
        fmt::print("{:>8} {:<7} {:>14} {:>10} {:>5} {:>10} {:>10} {:<4} {}\n", "PID", "CLASS", "TARGET", "TARGET/s", "TPCS", "PLANNED/s",
                   "ON TPCS/s", "MET", "MASK");
        for (std::size_t i = 0; i < planned.size(); ++i) {
            const PlannedProcess& p = plan.processes[i];
            fmt::print("{:>8} {:<7} {:>14} {:>10.1f} {:>5} {:>10.1f} {:>10.1f} {:<4} {}\n", planned[i].process->pid,
                       to_string(planned[i].classification.intensity), target_text(planned[i].target.target), p.target_rate, p.tpcs,
                       p.planned_rate, p.model_rate, p.met ? "yes" : "no", p.partition >= 0 ? masks[i].to_list() : "-");
        }
        fmt::print("\nPLANNED/s: the rate the plan guarantees under the fitted curves; ON TPCS/s: the rate on its partition "
                   "alone (rates are launches + graph replays per second, as `gpupart measure` counted them)\n");
        for (std::size_t k = 0; k < plan.partitions.size(); ++k)
            if (plan.partitions[k].processes.size() > 1)
                fmt::print("partition {} ({} TPCs) is shared by {} processes, {:.0f}% loaded\n", k, plan.partitions[k].tpcs,
                           plan.partitions[k].processes.size(), plan.partitions[k].load * 100);
        if (plan.feasible)
            fmt::print("every target is met; {} TPC{} left to no process\n", plan.spare_tpcs, plan.spare_tpcs == 1 ? "" : "s");
        else
            fmt::print("the targets cannot all be met: {}{}\n", plan.reason,
                       plan.partitions.empty() ? "" : fmt::format(" (the TPCs above; PLANNED/s is {:.1f}% of each target)", plan.closest_fraction * 100));
        if (!options.output_profile.empty() && plan.feasible)
            fmt::print("profile written to {} (`gpupart profile apply {}` applies it)\n", options.output_profile, options.output_profile);
    }
    if (!plan.feasible) {
        if (options.json) {
            out["applied"] = false;
            fmt::print("{}\n", json_answer(out));
        }
        std::fflush(stdout);  // the table first, then why nothing was applied, also into one file
        fmt::print(stderr, "gpupart: the targets cannot all be met; nothing applied{}: ask for at most {:.1f}% of them\n",
                   options.output_profile.empty() ? "" : " and no profile written", plan.closest_fraction * 100);
        return kExitRefused;
    }
    if (!options.apply) {
        if (options.json) {
            out["change"] = plan_json(change, state.gpu);
            out["applied"] = false;
            fmt::print("{}\n", json_answer(out));
            return kExitOk;
        }
        fmt::print("\nwhat --apply would do:\n");
        if (change.refused())
            for (const Finding& finding : change.findings)
                fmt::print("{}\n", finding_line(finding));
        else
            report_plan(change, state.gpu, false, true, std::nullopt);
        return kExitOk;
    }
    if (!options.json) fmt::print("\n");
    if (options.json) {  // one JSON answer: the plan above and the change as `gpupart set --json` gives it
        if (change.refused()) {
            out["change"] = plan_json(change, state.gpu);
            out["applied"] = false;
            fmt::print("{}\n", json_answer(out));
            return kExitRefused;
        }
        const Applied applied = controller.apply(change);
        out["change"] = plan_json(applied.plan, state.gpu);
        out["applied"] = true;
        out["journal_id"] = applied.entry.id;
        fmt::print("{}\n", json_answer(out));
        return kExitOk;
    }
    return plan_and_apply(controller, change, false, false);
}

}  // namespace

Command add_plan_command(CLI::App& app) {
    auto options = std::make_shared<PlanOptionsCli>();
    CLI::App* plan = app.add_subcommand("plan", "Size partitions for rate or share targets from measured curves (Zahaf et al., RTNS 2021); --apply applies them");
    plan->footer(
        "Each process needs a curve from `gpupart measure PID` (kept per command line, user and GPU). The plan shares out the "
        "TPCs that no partitioned process outside it holds, places each partition GPC-packed, and says per process whether its "
        "target is met; when the targets cannot all be met, why and the largest fraction of them that can. --apply is one "
        "change through the controller (one journal entry: `gpupart undo` reverts it).");
    plan->add_option("--target", options->targets, "PID=RATE (launches + graph replays per second) or PID=SHARE% (of its rate "
                                                   "alone on the whole GPU); once per process")
        ->required()
        ->take_all();
    plan->add_flag("--apply", options->apply, "Apply the masks (only when every target is met)");
    plan->add_option("--output-profile", options->output_profile, "Also write the plan as a profile file NAME.json (`gpupart profile apply` takes it)");
    plan->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_snapshot_options(*plan, options->snapshot);
    return {plan, [options] { return run_plan(*options); }};
}

}  // namespace gpupart::cli
