#include "gui_session.hpp"

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <set>


#include <fmt/format.h>

#include "controller/give_plan.hpp"
#include "controller/rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "display_text.hpp"
#include "floorplan_scene.hpp"
#include "owner_colors.hpp"

namespace gpupart::gui {
namespace {

// A private registry and journal for the demo, so the simulated workload never mixes with real
// partitioned processes or the user's history. /dev/shm like the real registry, else the temp dir.
std::string make_demo_dir() {
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    std::string pattern = base + "/gpupart-demo-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw UserError(fmt::format("cannot create a demo registry under {}: {}", base, std::strerror(errno)));
    return pattern;
}

// The processes a finding names ("process 4101 and process 4102 share ..."): a warning about the same
// processes under the same rule stood before a drop even when its TPC list changes with the drop.
std::set<std::string> named_processes(const std::string& message) {
    std::set<std::string> pids;
    for (std::size_t at = message.find("process "); at != std::string::npos; at = message.find("process ", at + 1)) {
        std::size_t end = at + 8;
        while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
        if (end > at + 8) pids.insert(message.substr(at + 8, end - at - 8));
    }
    return pids;
}

bool stood_before(const Finding& finding, const std::vector<Finding>& standing) {
    if (!finding.is_new) return true;
    const std::set<std::string> named = named_processes(finding.message);
    return !named.empty() && std::any_of(standing.begin(), standing.end(), [&](const Finding& f) {
        return f.id == finding.id && named_processes(f.message) == named;
    });
}

// What a drop would do, first: the change and each process's TPC count before and after; then the warnings the
// drop brings; the warnings that stood before it only as a count (the findings dock has them).
QString verdict_text(const Plan& plan, int gpu_tpcs, const std::vector<Finding>& standing) {
    for (const Finding& finding : plan.findings)
        if (finding.severity == Severity::error) return "Refused: " + widgets::plain_text(finding.message);
    QStringList changes;
    constexpr int kNamed = 4;
    for (const PlannedChange& change : plan.changes) {
        if (changes.size() == kNamed) {
            changes << QString("%1 more").arg(plan.changes.size() - kNamed);
            break;
        }
        const int before = change.before_partitioned ? change.before.count() : gpu_tpcs;
        const int after = change.after_partitioned ? change.after.count() : gpu_tpcs;
        changes << QString("%1: %2 → %3 TPCs").arg(change.pid).arg(before).arg(after);
    }
    QString text = widgets::plain_text(plan.action);  // messages quote command lines: escaped
    if (!changes.isEmpty()) text += " (" + changes.join(", ") + ")";
    QStringList brought;
    int stood = 0;
    for (const Finding& finding : plan.findings) {
        if (finding.severity != Severity::warning) continue;
        if (stood_before(finding, standing)) ++stood;
        else brought << widgets::plain_text(finding.message);
    }
    if (!brought.isEmpty()) text += " — new warning: " + brought.join("; ");
    if (stood > 0) text += QString(" — %1 warning%2 stood before the drop").arg(stood).arg(stood == 1 ? "" : "s");
    return text;
}

}  // namespace

GuiSession::GuiSession(const SessionOptions& options, QObject* parent) : QObject(parent), options_(options) {
    const bool gpu_present = !find_nvidia_gpus().empty();
    const bool demo = options.demo || (!options.snapshot && !gpu_present);
    if (demo) {
        if (options.snapshot && *options.snapshot != "builtin:h200")
            throw UserError("--demo runs on the built-in recorded H200 only (its workload is laid out on its GPCs)");
        chosen_ = choose_snapshot(std::string("builtin:h200"));
        chosen_.why = gpu_present ? "demo on the built-in recorded H200 (--demo)"
                                  : "no NVIDIA GPU on this machine: demo on the built-in recorded H200";
        demo_ = true;
        const char* named = std::getenv("GPUPART_REGISTRY_DIR");
        if (named != nullptr && *named != '\0') {
            // The registry the user named, as `gpupart top` and `gpupart demo start` read it: the app shows the
            // same processes (and the user's history), and never hides them behind a private registry of its own.
            named_registry_ = named;
        } else {
            demo_dir_ = make_demo_dir();
            for (const char* name : {"GPUPART_REGISTRY_DIR", "GPUPART_JOURNAL"})  // put back when the session ends
                if (const char* value = std::getenv(name)) saved_env_[name] = value;
            ::setenv("GPUPART_REGISTRY_DIR", demo_dir_.c_str(), 1);
            ::setenv("GPUPART_JOURNAL", (demo_dir_ + "/history.jsonl").c_str(), 1);
        }
    } else {
        // This machine's GPUs read live (or --snapshot). Before `gpupart probe` a live GPU's mask bits are not
        // known: the window shows the floorplan and refuses every change with that reason (see judge).
        chosen_ = choose_snapshot(options.snapshot);
    }
    gpu_index_ = gpu_index(chosen_, options.gpu);  // a GPU the snapshot does not have ends the start with one line
    build_controller();
    if (demo && !named_registry_.empty()) {
        controller_->refresh();
        const std::size_t found = controller_->state().processes.size();
        if (found > 0 || !options.demo)
            chosen_.why = fmt::format("{}: the built-in recorded H200 with the {} process{} of GPUPART_REGISTRY_DIR={}{}",
                                      gpu_present ? "--demo" : "no NVIDIA GPU on this machine", found, found == 1 ? "" : "es",
                                      named_registry_,
                                      found > 0 ? "" : " (none registered: `gpupart demo start` starts simulated ones, "
                                                       "or gpupart-gui --demo starts them in this registry)");
        else
            chosen_.why += fmt::format(", its workers in the empty registry GPUPART_REGISTRY_DIR={}", named_registry_);
    }
    // Workers of its own: in its private registry, or in the named one only when it is empty and --demo asks.
    if (demo && (named_registry_.empty() || (options.demo && controller_->state().processes.empty()))) {
        std::vector<DemoWorkerSpec> specs = demo_workers(options.demo_workers);
        if (options.demo_app_masks) specs[specs.size() > 1 ? 1 : 0].app_masks = true;
        demo_workers_ = start_demo_workers(gpu(), specs, 24 * 3600, true);
        // Wait (briefly) until every worker has registered, so the first picture is complete.
        for (int attempt = 0; attempt < 200; ++attempt) {
            controller_->refresh();
            if (controller_->state().processes.size() >= demo_workers_.size()) break;
            ::usleep(10000);
        }
    }
    sample();  // at start an error ends the program with its message, as any other start-up error
}

GuiSession::~GuiSession() {
    for (const StartedWorker& worker : demo_workers_) ::kill(worker.pid, SIGTERM);
    if (!demo_dir_.empty()) {
        for (int attempt = 0; attempt < 100; ++attempt) {  // the workers unlink their slots as they exit
            bool any = false;
            std::error_code error;  // a destructor must not throw
            // Slots live in the user's directory inside the demo registry (layout 3).
            for (const auto& entry : std::filesystem::recursive_directory_iterator(demo_dir_, error))
                any = any || entry.path().extension() == ".slot";
            if (!any) break;
            ::usleep(10000);
        }
        std::error_code ignored;
        std::filesystem::remove_all(demo_dir_, ignored);
        // The environment as it was, so a later session in this process (tests) does not read a removed registry.
        for (const char* name : {"GPUPART_REGISTRY_DIR", "GPUPART_JOURNAL"}) {
            const auto saved = saved_env_.find(name);
            if (saved != saved_env_.end()) ::setenv(name, saved->second.c_str(), 1);
            else ::unsetenv(name);
        }
    }
}

void GuiSession::build_controller() {
    const Gpu& selected = select_gpu(chosen_, gpu_index_);
    controller_ = std::make_unique<Controller>(Registry(Registry::default_directory()), selected,
                                               Journal(Journal::default_path()));
    launch_rates_.clear();
}

void GuiSession::selectGpu(int index) {
    if (index == gpu_index_) return;
    select_gpu(chosen_, index);  // throws on a bad index before anything changes
    gpu_index_ = index;
    build_controller();
    refresh();
}

bool GuiSession::isRecording() const { return chosen_.builtin || isDemo(); }

QString GuiSession::title() const {
    QString title = QString::fromStdString(gpu_display_name(gpu()));
    if (isDemo() && !named_registry_.empty()) title += " — recording with the processes of GPUPART_REGISTRY_DIR";
    else if (isDemo()) title += " — demo on a recording (simulated workload)";
    else if (chosen_.builtin) title += " — recording";
    else if (chosen_.live) title += mask_bits_known(gpu()) ? " — live" : " — live (mask bits not known: run gpupart probe)";
    else title += " — " + QString::fromStdString(chosen_.origin);
    return title;
}

void GuiSession::sample() {
    controller_->refresh();
    // Letters (and colours) first, so processes that appear together take them in pid order, as in top.
    std::set<std::pair<int, std::uint64_t>> live;
    for (const ProcessState& process : controller_->state().processes) live.insert({process.pid, process.start_time});
    widgets::update_owner_letters(live);
    rows_ = widgets::process_rows(controller_->state(), launch_rates_, LaunchRates::Clock::now());
    add_usage(std::chrono::steady_clock::now());
    findings_ = check_result(controller_->state());
}

void GuiSession::add_usage(std::chrono::steady_clock::time_point now) {
    if (!usage_read_ || now - *usage_read_ >= std::chrono::seconds(1)) {
        usage_read_ = now;
        std::vector<std::pair<int, std::uint64_t>> alive;
        usage_values_.clear();
        for (const widgets::ProcessRow& row : rows_) {
            alive.emplace_back(row.pid, row.start_time);
            usage_values_[{row.pid, row.start_time}] = usage_.sample(row.pid, row.start_time, now);
        }
        usage_.forget_except(alive);
    }
    for (widgets::ProcessRow& row : rows_) {
        const auto it = usage_values_.find({row.pid, row.start_time});
        if (it == usage_values_.end()) continue;  // started since the last reading: shown at the next
        row.cpu_percent = it->second.cpu_percent;
        row.rss_bytes = it->second.rss_bytes;
    }
}

void GuiSession::refresh() {
    // A timer slot must not throw: Qt would end the program. A failed sample (the registry directory
    // removed, a file unreadable) keeps the last one on screen and says why in the status bar.
    try {
        sample();
    } catch (const std::exception& error) {
        emit refreshFailed(QString("Could not refresh, showing the last sample: %1").arg(widgets::plain_text(error.what())));
        return;
    }
    emit refreshed();
}

Plan GuiSession::planGive(const widgets::DropTarget& target, const TpcMask& tpcs) const {
    if (!mask_bits_known(gpu())) {  // a mask could otherwise allow only holes and hang kernels
        Plan refused;
        refused.action = "give";
        refused.findings = {{Severity::error, "TPC numbers and descriptor holes (measured on the H200)",
                             "this GPU's TPC mask bits are not known (" + mask_bits_unknown_reason(gpu()) + ")",
                             "mask-bits-unknown"}};
        return refused;
    }
    if (!target.pid) return plan_give(*controller_, std::nullopt, tpcs);
    return plan_give(*controller_, ProcessRef{*target.pid, target.start_time}, tpcs);
}

widgets::DropVerdict GuiSession::judge(const widgets::DropTarget& target, const TpcMask& tpcs) const {
    widgets::DropVerdict verdict;
    if (!mask_bits_known(gpu())) {
        verdict.message = QString::fromStdString("Refused: this GPU's TPC mask bits are not known (" +
                                                 mask_bits_unknown_reason(gpu()) + ")");
        return verdict;
    }
    const Plan plan = planGive(target, tpcs);
    verdict.allowed = !plan.refused() && !plan.changes.empty();
    verdict.warning = std::any_of(plan.findings.begin(), plan.findings.end(),
                                  [this](const Finding& f) { return f.severity == Severity::warning && !stood_before(f, findings_); });
    verdict.message = plan.changes.empty() && !plan.refused() ? "Nothing to change" : verdict_text(plan, real_tpcs(gpu()).count(), findings_);
    if (plan.changes.empty() && !plan.refused()) verdict.allowed = false;
    return verdict;
}

Applied GuiSession::apply(const Plan& plan) {
    Applied applied = controller_->apply(plan);
    refresh();
    return applied;
}

}  // namespace gpupart::gui
