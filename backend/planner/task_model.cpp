#include "planner/task_model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

// Rounding slack for the tests below: a load computed as exactly 1 may come out as 1 + 1e-16.
constexpr double kSlack = 1e-9;

void check_curve(const Task& task, const ExecutionModel& model, std::string_view which) {
    if (!(std::isfinite(model.a) && model.a > 0) || !(std::isfinite(model.b) && model.b >= 0))
        throw UserError(fmt::format("{}: its {} curve C(m) = a/m + b has a = {}, b = {}; the planner needs a > 0 "
                                    "and b >= 0 (a time that falls with TPCs): measure its curve again",
                                    task.name, which, model.a, model.b));
}

}  // namespace

void check_tasks(const std::vector<Task>& tasks) {
    for (const Task& task : tasks) {
        check_curve(task, task.no_conflict, "no-conflict");
        check_curve(task, task.conflict, "conflict");
        if (!(std::isfinite(task.period) && task.period > 0))
            throw UserError(fmt::format("{}: its period (1 / target rate) must be above zero, got {} s", task.name,
                                        task.period));
        if (!(std::isfinite(task.deadline) && task.deadline > 0 && task.deadline <= task.period))
            throw UserError(fmt::format("{}: its deadline must be above zero and at most its period ({} s), got {} s",
                                        task.name, task.period, task.deadline));
    }
}

bool in_conflict(const std::vector<Task>& tasks, const std::vector<int>& members, int task) {
    const Intensity type = tasks[static_cast<std::size_t>(task)].type;
    for (int other : members)
        if (other != task && tasks[static_cast<std::size_t>(other)].type == type) return true;
    return false;
}

double execution_time(const std::vector<Task>& tasks, const std::vector<int>& members, int task, int tpcs) {
    const Task& t = tasks[static_cast<std::size_t>(task)];
    return (in_conflict(tasks, members, task) ? t.conflict : t.no_conflict).time(tpcs);
}

double partition_density(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs) {
    double sum = 0;
    for (int i : members) sum += execution_time(tasks, members, i, tpcs) / tasks[static_cast<std::size_t>(i)].deadline;
    return sum;
}

double partition_utilization(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs) {
    double sum = 0;
    for (int i : members) sum += execution_time(tasks, members, i, tpcs) / tasks[static_cast<std::size_t>(i)].period;
    return sum;
}

bool schedulable(const std::vector<Task>& tasks, const std::vector<int>& members, int tpcs) {
    return tpcs > 0 && partition_density(tasks, members, tpcs) <= 1.0 + kSlack;
}

double lemma1_demand(const std::vector<Task>& tasks) {
    double sum = 0;
    for (const Task& t : tasks) sum += t.no_conflict.time(1) / t.period;
    return sum;
}

std::optional<int> lemma2_tpcs(const Task& task, int total_tpcs) {
    // Cn is decreasing in m (a > 0), so the first m that meets the deadline is the smallest (Lemma 2's proof).
    for (int m = 1; m <= total_tpcs; ++m)
        if (task.no_conflict.time(m) <= task.deadline * (1.0 + kSlack)) return m;
    return std::nullopt;
}

}  // namespace gpupart
