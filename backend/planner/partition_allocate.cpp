#include "planner/partition_allocate.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

// Section 5.3. Two kinds of entries, because the seed uses the list two ways:
//  - task pairs (ACT's preliminary step, gpupart's memory pairs): a partner is excluded "where at least
//    one task is implied in a forbidden merge with a task of P" (Section 5.4), whatever else either holds;
//  - partition pairs (Algorithm 1 line 14): only that exact pair of task sets. Section 7.2 relies on this
//    for INA: tasks "not mergeable individually" may still end up together "through valid merging of
//    larger partitions".
class ForbiddenList {
public:
    void add_tasks(int i, int j) { task_pairs_.insert(std::minmax(i, j)); }
    void add_partitions(const Partition& a, const Partition& b) {
        partition_pairs_.insert(std::minmax(a.tasks, b.tasks));
    }
    bool forbids(const Partition& a, const Partition& b) const {
        if (partition_pairs_.count(std::minmax(a.tasks, b.tasks)) != 0) return true;
        for (int i : a.tasks)
            for (int j : b.tasks)
                if (task_pairs_.count(std::minmax(i, j)) != 0) return true;
        return false;
    }
    std::vector<std::pair<int, int>> task_pairs() const { return {task_pairs_.begin(), task_pairs_.end()}; }

private:
    std::set<std::pair<int, int>> task_pairs_;
    std::set<std::pair<std::vector<int>, std::vector<int>>> partition_pairs_;
};

std::vector<int> united(const Partition& p1, const Partition& p2) {
    std::vector<int> tasks;
    std::merge(p1.tasks.begin(), p1.tasks.end(), p2.tasks.begin(), p2.tasks.end(), std::back_inserter(tasks));
    return tasks;
}

// par_list's order: U(P) at |P|, decreasing or increasing; ties by lowest task index (deterministic).
void sort_list(const std::vector<Task>& tasks, std::vector<Partition>& list, ListOrder order) {
    std::stable_sort(list.begin(), list.end(), [&](const Partition& l, const Partition& r) {
        const double ul = partition_utilization(tasks, l.tasks, l.tpcs);
        const double ur = partition_utilization(tasks, r.tasks, r.tpcs);
        if (ul != ur) return order == ListOrder::decreasing_utilization ? ul > ur : ul < ur;
        return l.tasks.front() < r.tasks.front();
    });
}

int required(const std::vector<Partition>& list) {
    int sum = 0;
    for (const Partition& p : list) sum += p.tpcs;
    return sum;
}

struct Selection {
    std::size_t first = 0;                // P1, an index into par_list
    std::vector<std::size_t> partners;    // elig_list, sorted by the order relation
};

// Algorithm 3. `list` is par_list in its order, so "choose from(candidates)" takes them in turn.
std::optional<Selection> select_partitions(const std::vector<Task>& tasks, const std::vector<Partition>& list,
                                           const ForbiddenList& forbidden, const PartitionOptions& options,
                                           int total_tpcs) {
    for (std::size_t p = 0; p < list.size(); ++p) {
        std::vector<std::size_t> eligible;  // line 8: par_list \ forbidden (and not P itself)
        for (std::size_t q = 0; q < list.size(); ++q)
            if (q != p && !forbidden.forbids(list[p], list[q])) eligible.push_back(q);
        if (eligible.empty()) continue;  // lines 9-12: the next candidate
        if (options.order == MergeOrder::best_fit) {
            auto key = [&](std::size_t q) {
                return partition_utilization(tasks, united(list[p], list[q]), std::max(list[p].tpcs, list[q].tpcs));
            };
            std::stable_sort(eligible.begin(), eligible.end(),
                             [&](std::size_t l, std::size_t r) { return key(l) < key(r); });
            return Selection{p, eligible};
        }
        // ≼: the partner whose merge is smallest; a failed merge sorts last. Only the best is returned.
        std::size_t best = eligible.front();
        int best_size = std::numeric_limits<int>::max();
        for (std::size_t q : eligible) {
            const auto merged = merge_partitions(tasks, list[p], list[q], total_tpcs);
            if (merged && merged->tpcs < best_size) {
                best = q;
                best_size = merged->tpcs;
            }
        }
        return Selection{p, {best}};
    }
    return std::nullopt;  // line 13
}

}  // namespace

std::optional<Partition> merge_partitions(const std::vector<Task>& tasks, const Partition& p1, const Partition& p2,
                                          int total_tpcs) {
    Partition merged{united(p1, p2), 0};                 // line 3
    for (int m = std::max(p1.tpcs, p2.tpcs);             // line 4
         m < p1.tpcs + p2.tpcs && m <= total_tpcs; ++m) {  // lines 5 and 12
        if (schedulable(tasks, merged.tasks, m)) {       // lines 6-10
            merged.tpcs = m;
            return merged;
        }
    }
    return std::nullopt;  // line 15
}

PartitionResult partition_and_allocate(const std::vector<Task>& tasks, int total_tpcs, const PartitionOptions& options) {
    if (total_tpcs < 1) throw UserError(fmt::format("a GPU of {} TPCs cannot be partitioned", total_tpcs));
    check_tasks(tasks);
    PartitionResult result;
    const int n = static_cast<int>(tasks.size());

    // Lemma 1, before the heuristic starts.
    result.lemma1_demand = lemma1_demand(tasks);
    if (result.lemma1_demand > total_tpcs) {
        result.reason = fmt::format("even spread perfectly over TPCs the targets need the work of {:.1f} TPCs and the "
                                    "GPU has {} (Zahaf et al., RTNS 2021, Lemma 1)",
                                    result.lemma1_demand, total_tpcs);
        return result;
    }

    // Line 2, init partitions (Section 5.1): one partition per task, sized by Lemma 2.
    std::vector<Partition> list;
    for (int i = 0; i < n; ++i) {
        const Task& t = tasks[static_cast<std::size_t>(i)];
        const auto m = lemma2_tpcs(t, total_tpcs);
        if (!m) {
            result.reason = fmt::format("{} cannot meet its target even alone on all {} TPCs: one job takes {:.4g} s "
                                        "there and must end within {:.4g} s (Zahaf et al., RTNS 2021, Lemma 2)",
                                        t.name, total_tpcs, t.no_conflict.time(total_tpcs), t.deadline);
            return result;
        }
        list.push_back(Partition{{i}, *m});
    }
    sort_list(tasks, list, options.list_order);

    ForbiddenList forbidden;
    if (options.forbid_memory_pairs)
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
                if (tasks[static_cast<std::size_t>(i)].type == Intensity::memory &&
                    tasks[static_cast<std::size_t>(j)].type == Intensity::memory)
                    forbidden.add_tasks(i, j);
    if (options.exhaustive_forbidden) {  // line 3 (ACT): every couple of tasks tested for a merge
        for (std::size_t i = 0; i < list.size(); ++i)
            for (std::size_t j = i + 1; j < list.size(); ++j)
                if (!merge_partitions(tasks, list[i], list[j], total_tpcs))
                    forbidden.add_tasks(list[i].tasks.front(), list[j].tasks.front());
    }
    result.forbidden_task_pairs = forbidden.task_pairs();

    while (required(list) > total_tpcs) {  // line 4 (Lemma 3: Pi <= N ends it on success)
        const auto selection = select_partitions(tasks, list, forbidden, options, total_tpcs);  // line 5
        if (!selection) {  // lines 6-8
            result.partitions = list;
            result.required_tpcs = required(list);
            result.reason = fmt::format("no two partitions can be merged any more and they need {} TPCs of the {} "
                                        "(Zahaf et al., RTNS 2021, Algorithm 1 line 7)",
                                        result.required_tpcs, total_tpcs);
            return result;
        }
        const Partition p1 = list[selection->first];
        for (std::size_t q : selection->partners) {  // lines 9-19
            const Partition p2 = list[q];
            const auto p3 = merge_partitions(tasks, p1, p2, total_tpcs);  // line 12
            if (!p3) {
                forbidden.add_partitions(p1, p2);  // line 14
                result.steps.push_back(MergeStep{MergeStep::Kind::forbidden, p1, p2, 0});
                continue;
            }
            std::erase(list, p1);  // lines 16-17
            std::erase(list, p2);
            list.push_back(*p3);
            sort_list(tasks, list, options.list_order);
            result.steps.push_back(MergeStep{MergeStep::Kind::merged, p1, p2, p3->tpcs});
            break;
        }
    }
    result.schedulable = true;  // line 21
    result.partitions = list;
    result.required_tpcs = required(list);
    return result;
}

}  // namespace gpupart
