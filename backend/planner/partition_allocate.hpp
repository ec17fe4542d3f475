#pragma once
// Zahaf et al.'s (RTNS 2021) heuristic "Partition and allocate" (Section 5): sizes partitions of a GPU and allocates
// tasks to them so that every task meets its deadline, merging partitions to save resources.
//   - Algorithm 1 (partition and allocate): a partition per task, sized by Lemma 2; while the partitions
//     need more than N TPCs (Lemma 3's test Pi <= N fails), merge two of them; fail when no merge is left.
//   - Algorithm 2 (merge): the smallest m from max(|P1|, |P2|) up to, not including, |P1| + |P2| at which
//     the union is schedulable; no such m means the merge saves nothing (Definition 2) and fails.
//   - Algorithm 3 (select partitions): the first partition of the list (kept in utilization order) that
//     has an eligible partner, and its partners sorted by the order relation (Definitions 3 and 4).
//   - The forbidden list (Section 5.3): pairs that must not be merged, filled when a merge fails, and
//     optionally beforehand by testing every pair of tasks (ACT; INA without it).
// See task_model.hpp for the tasks, conflicts and the schedulability test.
#include <string>
#include <vector>

#include "planner/task_model.hpp"

namespace gpupart {

// Order relation used to sort a partition's merge partners (Section 5.4, Definitions 3 and 4).
enum class MergeOrder {
    // "≼", called SMS in Section 7: the partner whose merge needs the fewest TPCs (each merge is computed
    // with Algorithm 2); only that best one is returned, as Algorithm 3's text says for this relation.
    smallest_merge,
    // ">", called BF (best fit): partners by the utilization U of the merged task set, lowest first. The
    // seed says this relation "does not require a merge": U is taken at the size Algorithm 2 starts from,
    // max(|P1|, |P2|).
    best_fit,
};

// The order par_list is kept in (Section 5, after Lemma 1: "decreasing/increasing utilization order"),
// by U(P) at |P|; ties by the lowest task index in the partition.
enum class ListOrder { decreasing_utilization, increasing_utilization };

struct PartitionOptions {
    MergeOrder order = MergeOrder::smallest_merge;
    ListOrder list_order = ListOrder::decreasing_utilization;
    // Algorithm 1 line 3 (ACT): test every pair of tasks first and forbid those whose merge fails.
    bool exhaustive_forbidden = false;
    // gpupart's own rule: two memory-intensive tasks never share a partition, entered into the
    // forbidden list as task pairs before Algorithm 1 starts. Not in the seed, where such a pair is only
    // forbidden when its merge fails (with its conflict curves it usually does: Section 7.1's k = 2.3).
    bool forbid_memory_pairs = true;
};

struct Partition {
    std::vector<int> tasks;  // indices into the task set, ascending
    int tpcs = 0;            // |P|
    bool operator==(const Partition&) const = default;
};

// One step of Algorithm 1, for explaining a plan (and for tests that follow the algorithm line by line).
struct MergeStep {
    enum class Kind { merged, forbidden } kind = Kind::merged;
    Partition first;   // P1
    Partition second;  // P2
    int tpcs = 0;      // |P3| when merged
};

struct PartitionResult {
    bool schedulable = false;
    std::vector<Partition> partitions;  // par_list at the end, in list order
    int required_tpcs = 0;              // Pi = sum |P|
    double lemma1_demand = 0;           // sum Cn_i(1) / T_i
    std::vector<MergeStep> steps;
    // Pairs of tasks in the forbidden list before Algorithm 1's loop (memory pairs, ACT), as (i, j), i < j.
    std::vector<std::pair<int, int>> forbidden_task_pairs;
    std::string reason;  // why not schedulable, one line; empty when schedulable
};

// Algorithm 2: the merge of `p1` and `p2` (Definition 2), or nullopt. m never exceeds `total_tpcs`
// (a partition larger than the GPU cannot exist; the seed's loop has no such bound, but such a merge
// could never lead to Pi <= N).
std::optional<Partition> merge_partitions(const std::vector<Task>& tasks, const Partition& p1, const Partition& p2,
                                          int total_tpcs);

// Algorithm 1 on `tasks` for a GPU of `total_tpcs` TPCs. Applies Lemma 1 first (as the seed does, "not
// explicitly mentioned on the algorithm"), then Lemma 2 to size the initial partitions. Throws
// UserError on malformed tasks (check_tasks) or total_tpcs < 1; an unschedulable set is a result.
PartitionResult partition_and_allocate(const std::vector<Task>& tasks, int total_tpcs,
                                       const PartitionOptions& options = {});

}  // namespace gpupart
