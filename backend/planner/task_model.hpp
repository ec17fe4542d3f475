#pragma once
// Zahaf et al.'s (RTNS 2021) task and partition model (Sections 4 and 5.1-5.5), in gpupart's unit: a partition is a
// number of TPCs of one GPU of N TPCs (the seed's M SMs), every task a process sharing it.
//
//  - Task tau_i = {T_i, D_i, M_i, Cc_i(m), Cn_i(m)} (Section 4.2): period, relative deadline, type
//    (memory or compute), execution time with and without conflict on a partition of m TPCs.
//  - Conflict (Section 4.2): a memory-intensive (compute-intensive) task is in conflict when at least one
//    other memory-intensive (compute-intensive) task is in its partition.
//  - C_i(T(P), |P|): Cc_i(|P|) when tau_i is in conflict in P, Cn_i(|P|) otherwise.
//  - Schedulability within a partition (Section 5.5 leaves the policy open: "any policy for which there
//    is an effective schedulability test can be used"): the tasks of P share its |P| TPCs in time, each
//    job running on all of them, and we use EDF's density test, sum C_i(T(P),|P|) / D_i <= 1 (exact for
//    D_i = T_i, sufficient for D_i < T_i). For one task it is Cn(m) <= D, Lemma 2's condition. Deadlines
//    are constrained (D_i <= T_i), as in the seed's task sets (Section 7.1: D_i = 0.75 T_i).
#include <optional>
#include <string>
#include <vector>

#include "planner/classification.hpp"
#include "planner/scaling_curve.hpp"

namespace gpupart {

struct Task {
    std::string name;                 // for messages: the process, as the caller names it
    Intensity type = Intensity::compute;  // M_i
    ExecutionModel no_conflict;       // Cn_i(m), seconds
    ExecutionModel conflict;          // Cc_i(m), seconds
    double period = 0;                // T_i, seconds: the minimum time between two jobs (1 / target rate)
    double deadline = 0;              // D_i, seconds: a job must end this long after it arrives
};

// Throws UserError unless every task has a > 0, b >= 0 in both curves, and 0 < D <= T.
void check_tasks(const std::vector<Task>& tasks);

// `members`: indices into the task set, the tasks of one partition.
bool in_conflict(const std::vector<Task>& tasks, const std::vector<int>& members, int task);
// C_i(T(P), m).
double execution_time(const std::vector<Task>& tasks, const std::vector<int>& members, int task, int tpcs);
// sum C_i(T(P), m) / D_i: the partition's load under the test above (<= 1: schedulable).
double partition_density(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs);
// sum C_i(T(P), m) / T_i: the partition utilization U of Definition 4 (read as a utilization, each
// time over its period: the formula in the text leaves out T_i, which would add up seconds of tasks
// with different periods; the evaluation in Section 7.2 speaks of utilization).
double partition_utilization(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs);
bool schedulable(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs);

// Lemma 1 (a necessary test): the task set is not schedulable if sum Cn_i(1) / T_i > N. Returns that sum.
double lemma1_demand(const std::vector<Task>& tasks);
// Lemma 2: the smallest m in 1..N with Cn(m) - D <= 0 (for one task alone); nullopt when even N fails.
std::optional<int> lemma2_tpcs(const Task& task, int total_tpcs);

}  // namespace gpupart
