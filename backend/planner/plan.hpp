#pragma once
// Zahaf et al.'s (RTNS 2021) partition-and-allocate (partition_allocate.hpp) for gpupart's processes: each process with
// a measured curve, a class and a target becomes one of the seed's tasks, and the result says how many
// TPCs each process gets, which processes share a partition, whether each target is met, and, when the
// targets cannot all be met, why and what is closest.
//
// How a process becomes a task (Section 4.2):
//  - Cn(m) = its measured curve (seconds per unit of progress, alone on m TPCs).
//  - Cc(m) = its curve measured beside a process of its own kind when the caller has one; otherwise
//    Cn(m) x k with the seed's k (Section 7.1: 1.2 for compute-intensive, 2.3 for memory-intensive; Figure 4
//    measured 2.42 for a memory-intensive kernel beside another).
//  - T = 1 / target rate: a rate target of R units per second is a period of 1/R.
//  - D = T, or the latency target when one is given and shorter.
// A share target is a fraction of the rate the process reaches alone on the whole GPU (1 / Cn(N), N the
// GPU's TPCs, PlanOptions::whole_gpu_tpcs, even when the plan may use fewer of them): 0.5 asks for half its
// full-GPU speed, which a memory-bound process may reach with far fewer than half the TPCs.
#include <optional>
#include <string>
#include <vector>

#include "planner/partition_allocate.hpp"

namespace gpupart {

struct Target {
    enum class Kind { rate, share };
    Kind kind = Kind::rate;
    double value = 0;  // rate: units per second; share: a fraction in (0, 1]
    std::optional<double> latency;  // seconds: each unit must end this long after it may start
    static Target rate(double per_second) { return {Kind::rate, per_second, std::nullopt}; }
    static Target share(double fraction) { return {Kind::share, fraction, std::nullopt}; }
};

struct PlanProcess {
    std::string name;  // how messages name it, e.g. "pid 4242 (python3 train.py)"
    ExecutionModel curve;  // Cn, from fit_curve
    Intensity intensity = Intensity::compute;  // from classify
    std::optional<ExecutionModel> conflict_curve;  // Cc when measured; else curve x the factor below
    Target target;
};

struct PlanOptions {
    PartitionOptions partition;
    double compute_conflict_factor = 1.2;  // Section 7.1's k for compute-intensive tasks in conflict
    double memory_conflict_factor = 2.3;   // ... and for memory-intensive ones
    // The TPCs of the whole GPU, which a share target's "alone" rate is on; 0: the TPCs planned over. A plan
    // over what other processes leave (fewer TPCs) still means "50%" as half of the whole-GPU rate.
    int whole_gpu_tpcs = 0;
};

struct PlannedProcess {
    std::string name;
    int partition = -1;  // index into PartitionPlan::partitions; -1 when the plan has none for it
    int tpcs = 0;        // its partition's size
    double target_rate = 0;   // what the target asks, in units per second
    double planned_rate = 0;  // what the plan guarantees under the model: the target rate when met,
                              // the closest fraction of it otherwise
    double model_rate = 0;    // 1 / C_i(T(P), |P|): its rate on its partition if it had the partition's time
                              // to itself (with the conflict curve when it shares with its own kind)
    bool in_conflict = false;
    bool met = false;
};

struct PlannedPartition {
    std::vector<int> processes;  // indices into the input, ascending
    int tpcs = 0;
    double load = 0;  // sum C_i / D_i at tpcs: the share of the partition's time the planned rates take
};

struct PartitionPlan {
    bool feasible = false;  // every target met
    int total_tpcs = 0;
    int spare_tpcs = 0;  // TPCs no partition needs (the seed leaves them unused; a caller may hand them out)
    std::vector<PlannedPartition> partitions;
    std::vector<PlannedProcess> processes;  // in input order
    std::string reason;  // when not feasible: why, one line, naming the seed's lemma or line
    // When not feasible: the largest fraction f found such that f x every target rate can be met (the
    // partitions above are that plan); 0 when not even a small fraction can. 1 when feasible. Found by
    // bisection (to 1e-4) over Algorithm 1, which is a heuristic: a larger fraction may exist.
    double closest_fraction = 1.0;
    PartitionResult detail;  // Algorithm 1's run for the plan above (steps, forbidden pairs)
};

// Plans `processes` on a GPU of `total_tpcs` TPCs. Throws UserError on a malformed input (a target not
// above zero, a share above 1, a curve that does not fall with TPCs); infeasible targets are a result.
PartitionPlan plan_partitions(const std::vector<PlanProcess>& processes, int total_tpcs, const PlanOptions& options = {});

}  // namespace gpupart
