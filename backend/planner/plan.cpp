#include "planner/plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

// The closest fraction is searched to this resolution.
constexpr double kFractionResolution = 1e-4;

double target_rate(const PlanProcess& p, int whole_gpu_tpcs) {
    const Target& t = p.target;
    if (!(std::isfinite(t.value) && t.value > 0))
        throw UserError(fmt::format("{}: its target must be above zero, got {}", p.name, t.value));
    if (t.latency && !(std::isfinite(*t.latency) && *t.latency > 0))
        throw UserError(fmt::format("{}: its latency target must be above zero seconds, got {}", p.name, *t.latency));
    if (t.kind == Target::Kind::rate) return t.value;
    if (t.value > 1)
        throw UserError(fmt::format("{}: a share target is a fraction of its full-GPU rate, at most 1, got {}", p.name,
                                    t.value));
    return t.value * p.curve.rate(whole_gpu_tpcs);
}

// The seed's tasks for these processes, each rate multiplied by `fraction`.
std::vector<Task> tasks_for(const std::vector<PlanProcess>& processes, const std::vector<double>& rates,
                            double fraction, const PlanOptions& options) {
    std::vector<Task> tasks;
    for (std::size_t i = 0; i < processes.size(); ++i) {
        const PlanProcess& p = processes[i];
        Task t;
        t.name = p.name;
        t.type = p.intensity;
        t.no_conflict = p.curve;
        t.conflict = p.conflict_curve.value_or(p.curve.scaled(
            p.intensity == Intensity::memory ? options.memory_conflict_factor : options.compute_conflict_factor));
        t.period = 1.0 / (rates[i] * fraction);
        t.deadline = p.target.latency ? std::min(*p.target.latency, t.period) : t.period;
        tasks.push_back(std::move(t));
    }
    return tasks;
}

void fill(PartitionPlan& plan, const std::vector<Task>& tasks, const std::vector<double>& rates, double fraction,
          const PartitionResult& run) {
    plan.partitions.clear();
    for (std::size_t i = 0; i < plan.processes.size(); ++i) {
        PlannedProcess& p = plan.processes[i];
        p.partition = -1;
        p.tpcs = 0;
        p.planned_rate = 0;
        p.model_rate = 0;
        p.in_conflict = false;
        p.met = false;
        p.target_rate = rates[i];
    }
    for (const Partition& part : run.partitions) {
        const int index = static_cast<int>(plan.partitions.size());
        plan.partitions.push_back(PlannedPartition{part.tasks, part.tpcs, partition_density(tasks, part.tasks, part.tpcs)});
        for (int t : part.tasks) {
            PlannedProcess& p = plan.processes[static_cast<std::size_t>(t)];
            p.partition = index;
            p.tpcs = part.tpcs;
            p.in_conflict = in_conflict(tasks, part.tasks, t);
            p.model_rate = 1.0 / execution_time(tasks, part.tasks, t, part.tpcs);
            p.planned_rate = run.schedulable ? rates[static_cast<std::size_t>(t)] * fraction : 0.0;
            p.met = run.schedulable && fraction >= 1.0;
        }
    }
    plan.spare_tpcs = run.schedulable ? plan.total_tpcs - run.required_tpcs : 0;
    plan.detail = run;
}

}  // namespace

PartitionPlan plan_partitions(const std::vector<PlanProcess>& processes, int total_tpcs, const PlanOptions& options) {
    if (total_tpcs < 1) throw UserError(fmt::format("a GPU of {} TPCs cannot be partitioned", total_tpcs));
    PartitionPlan plan;
    plan.total_tpcs = total_tpcs;
    std::vector<double> rates;
    for (const PlanProcess& p : processes) {
        if (!(p.curve.a > 0 && p.curve.b >= 0))
            throw UserError(fmt::format("{}: its curve has a = {}, b = {}; measure it again (gpupart measure)", p.name,
                                        p.curve.a, p.curve.b));
        rates.push_back(target_rate(p, options.whole_gpu_tpcs > 0 ? options.whole_gpu_tpcs : total_tpcs));
        PlannedProcess planned;
        planned.name = p.name;
        plan.processes.push_back(std::move(planned));
    }

    std::vector<Task> tasks = tasks_for(processes, rates, 1.0, options);
    const PartitionResult full = partition_and_allocate(tasks, total_tpcs, options.partition);
    if (full.schedulable) {
        plan.feasible = true;
        fill(plan, tasks, rates, 1.0, full);
        return plan;
    }

    // Not every target can be met: the largest common fraction of them that can (bisection; Algorithm 1
    // is a heuristic, so feasibility need not be monotone in the fraction: what is found is a lower bound).
    plan.reason = full.reason;
    double low = 0, high = 1;
    std::optional<std::pair<std::vector<Task>, PartitionResult>> best;
    while (high - low > kFractionResolution) {
        const double mid = (low + high) / 2;
        std::vector<Task> scaled = tasks_for(processes, rates, mid, options);
        PartitionResult run = partition_and_allocate(scaled, total_tpcs, options.partition);
        if (run.schedulable) {
            low = mid;
            best.emplace(std::move(scaled), std::move(run));
        } else {
            high = mid;
        }
    }
    if (best) {
        plan.closest_fraction = low;
        fill(plan, best->first, rates, low, best->second);
        plan.reason += fmt::format("; the closest plan meets {:.1f}% of every target", 100.0 * low);
    } else {
        plan.closest_fraction = 0;
        fill(plan, tasks, rates, 1.0, full);
        plan.reason += "; no fraction of the targets can be met either";
    }
    return plan;
}

}  // namespace gpupart
