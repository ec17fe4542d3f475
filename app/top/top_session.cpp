#include "top/top_session.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "controller/move_plan.hpp"  // plan_give, plan_grow, plan_shrink
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "top/top_view.hpp"

namespace gpupart::top {

TopSession::TopSession(Controller controller, Registry registry, TopSource source, Settings settings, std::vector<Gpu> gpus)
    : controller_(std::move(controller)), registry_(std::move(registry)), source_(std::move(source)), gpus_(std::move(gpus)) {
    ui_.settings = settings;
    sample();  // at start an error ends top with its message, as any other start-up error
}

// Why the registry directory cannot be seen, or "" when it can (or was never made: no process has
// registered yet, which is no news). The registry reads a missing directory as empty: a view left
// running must not turn "the registry was removed" into "0 processes" without a word.
std::string TopSession::registry_problem() {
    struct stat info {};
    const std::string dir = one_line(registry_.directory());
    if (::stat(registry_.directory().c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode)) {
            registry_seen_ = true;
            return "";
        }
        return fmt::format("registry {} is not a directory: no process can be shown", dir);
    }
    if (errno != ENOENT) return fmt::format("registry {} cannot be examined ({}): no process can be shown", dir, std::strerror(errno));
    return registry_seen_ ? fmt::format("registry {} is gone (removed while top ran): its processes are not shown; "
                                        "it is made again when a process registers", dir)
                          : "";
}

void TopSession::sample() {
    controller_.refresh();
    // The letters of processes whose exit the message line still announces are given to no newcomer.
    if (ui_.message != exit_notice_) exit_notice_letters_.clear();
    letters_.hold_back(exit_notice_letters_);
    const std::vector<int> order_before = shown_pids();
    const TopProcess* selected_before = selected_process(data_, ui_);
    const int selected_pid = selected_before ? selected_before->pid : 0;
    data_ = make_top_data(controller_.state(), source_, registry_.directory(), rates_, letters_,
                          std::chrono::steady_clock::now());
    data_.registry_problem = registry_problem();
    const auto meters = meters_.read(controller_.state().gpu_uuid);
    add_meters(data_, meters, meters_.problem());
    add_usage(data_, usage_, std::chrono::steady_clock::now());
    scaling_.add_to(data_, controller_.state().gpu_uuid, std::chrono::steady_clock::now());
    // SMLP components, read lock-free with the processes: a planted or broken file is one problem line in the view (x).
    add_smlp(data_, controller_.state().smlp, controller_.state().smlp_read_ns);
    data_.smlp_problem = controller_.state().smlp_problem;
    std::vector<InterferenceWatch::Sample> rates;
    for (const TopProcess& p : data_.processes) rates.push_back({p.pid, p.start_time, p.partitioned, p.generation, p.launches_per_second});
    for (Finding& finding : interference_.update(rates, std::chrono::steady_clock::now())) {
        finding.message = one_line(finding.message);
        data_.findings.insert(data_.findings.begin(), std::move(finding));
    }
    // An exit is said, so that a letter that disappears from the floorplan is explained.
    if (!data_.exited.empty()) {
        const ExitedOwner& gone = data_.exited.front();
        ui_.message = data_.exited.size() == 1
                          ? fmt::format("{} exited: pid {} ({})", gone.letter, gone.pid, gone.command)
                          : fmt::format("{} processes exited: {} (pid {}) and {} more",
                                        data_.exited.size(), gone.letter, gone.pid, data_.exited.size() - 1);
        ui_.message_is_error = false;
        exit_notice_ = ui_.message;
        exit_notice_letters_.clear();
        for (const ExitedOwner& owner : data_.exited)
            if (owner.index >= 0) exit_notice_letters_.insert(static_cast<std::size_t>(owner.index));
    }
    keep_selection(order_before, selected_pid);
}

std::vector<int> TopSession::shown_pids() const {
    std::vector<int> pids;
    for (const TopProcess* p : visible_processes(data_, ui_)) pids.push_back(p->pid);
    return pids;
}

// The selection follows its process across samples and re-sorts (ui_.selected_pid is always a pid, never
// "the first row"); when that process is gone it moves to its nearest neighbour in the table's order.
void TopSession::keep_selection(const std::vector<int>& order_before, int selected_pid) {
    if (const int pid = selection_after(order_before, selected_pid, shown_pids()); pid != 0)
        ui_.selected_pid = pid;
    else if (const TopProcess* first = selected_process(data_, ui_))
        ui_.selected_pid = first->pid;  // nothing was selected yet
}

void TopSession::refresh() {
    // A view left running for hours must not die of one failed sample: it keeps the last one and
    // says why on the message line until a sample succeeds again.
    try {
        sample();
        if (!refresh_error_.empty() && ui_.message == refresh_error_) ui_.message.clear();  // not a later one
        refresh_error_.clear();
    } catch (const std::exception& error) {
        refresh_error_ = fmt::format("could not refresh, showing the last sample: {}", error.what());
        ui_.message = refresh_error_;
        ui_.message_is_error = true;
    }
}

Screen TopSession::frame(int width, int height) {
    last_ = layout_top(data_, ui_, width, height);
    ui_.table_first_row = last_.table_first_row;
    return last_;
}

bool TopSession::handle(const Key& key) {
    const Intent intent = handle_key(ui_, data_, last_, key);
    if (intent.kind == IntentKind::quit) return false;
    carry_out(intent);
    return true;
}

std::string TopSession::process_name(int pid) const {
    const TopProcess* p = find_process(data_, pid);
    return p ? fmt::format("{} {}", p->letter, pid) : std::to_string(pid);
}

void TopSession::propose(Plan plan, std::string title) {
    ui_.pending = PendingPlan{std::move(plan), std::move(title)};
    ui_.dialog = Dialog::confirm;
}

// One GPU at a time: the next one's floorplan and processes, with a fresh controller over it (its
// processes, findings and undo are that GPU's). Marks and rates belong to the GPU left.
void TopSession::next_gpu() {
    if (gpus_.size() < 2) {
        ui_.message = "this snapshot has one GPU";
        ui_.message_is_error = false;
        return;
    }
    std::size_t at = 0;
    while (at < gpus_.size() && gpus_[at].index != data_.gpu.index) ++at;
    const Gpu& next = gpus_[(at + 1) % gpus_.size()];
    controller_ = controller_.with_gpu(next);
    rates_ = LaunchRates(kTopRateWindow);
    ui_.marked = TpcMask{};
    ui_.tagged.clear();
    ui_.message = fmt::format("GPU {}: {} ({})", next.index, gpu_display_name(next), gpu_key(next));
    ui_.message_is_error = false;
    refresh();
}

void TopSession::carry_out(const Intent& intent) {
    if (intent.kind == IntentKind::none) return;
    if (intent.kind == IntentKind::redraw) {  // Ctrl-L: a sample now and every cell painted again
        repaint_ = true;
        refresh();
        return;
    }
    if (intent.kind == IntentKind::next_gpu) {  // looking, not changing: allowed in a view-only session
        next_gpu();
        return;
    }
    if (!source_.read_only.empty()) {
        ui_.dialog = Dialog::none;
        ui_.message = "view only: " + source_.read_only;
        ui_.message_is_error = true;
        return;
    }
    try {
        controller_.refresh();  // plan against the registry as it is now, not as it was drawn
        switch (intent.kind) {
            case IntentKind::give:
                propose(plan_give(controller_, intent.target, intent.tpcs),
                        fmt::format("Give TPCs {} to {}?", intent.tpcs.to_list(), process_name(intent.target.pid)));
                break;
            case IntentKind::release:
                propose(plan_give(controller_, std::nullopt, intent.tpcs), fmt::format("Release TPCs {}?", intent.tpcs.to_list()));
                break;
            case IntentKind::grow:
                propose(plan_grow(controller_, intent.targets),
                        intent.targets.size() == 1 ? fmt::format("Add a TPC to {}?", process_name(intent.targets.front().pid))
                                                   : fmt::format("Add a TPC to each of {} processes?", intent.targets.size()));
                break;
            case IntentKind::shrink:
                propose(plan_shrink(controller_, intent.targets),
                        intent.targets.size() == 1 ? fmt::format("Take a TPC from {}?", process_name(intent.targets.front().pid))
                                                   : fmt::format("Take a TPC from each of {} processes?", intent.targets.size()));
                break;
            case IntentKind::undo: {
                Plan plan = controller_.plan_undo();
                // plan.action reads "undo #3 (set 1234 gpc1)": the title asks it as a question, once.
                std::string title = plan.refused() ? std::string("Undo") : fmt::format("{}{}?", static_cast<char>(std::toupper(plan.action.front())), plan.action.substr(1));
                propose(std::move(plan), std::move(title));
                break;
            }
            case IntentKind::apply: {
                const Applied applied = controller_.apply(ui_.pending->plan);
                // Notes (a journal line skipped, an audit record not delivered) are said, never dropped.
                ui_.message = fmt::format("applied #{}: {}{}{}", applied.entry.id, applied.entry.action,
                                          applied.entry.undoes ? "" : " · u undoes it",
                                          applied.notes.empty() ? "" : fmt::format(" · note: {}{}", applied.notes.front(),
                                                                                   applied.notes.size() > 1 ? fmt::format(" (+{} more)", applied.notes.size() - 1) : ""));
                ui_.message_is_error = false;
                ui_.dialog = Dialog::none;
                ui_.pending.reset();
                ui_.marked = {};
                break;
            }
            case IntentKind::none:
            case IntentKind::quit:
            case IntentKind::redraw:
            case IntentKind::next_gpu: break;  // handled above
        }
    } catch (const UserError& error) {
        ui_.dialog = Dialog::none;
        ui_.pending.reset();
        ui_.message = error.what();
        ui_.message_is_error = true;
    }
    refresh();
}

}  // namespace gpupart::top
