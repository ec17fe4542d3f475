// gpupart measure PID: the process's scaling curve, measured live. Its TPCs are walked from all it may use
// down to a floor (GPC-packed masks), its progress rate counted at each count, C(m) = a/m + b fitted, the
// process classed compute- or memory-intensive (Zahaf et al., RTNS 2021), and the curve saved for `gpupart plan`. The
// TPCs it had are always put back; the walk is one journaled change (measure_walk.hpp says how).
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "curve_paths.hpp"
#include "exit_codes.hpp"
#include "measure_walk.hpp"
#include "model/gpu_queries.hpp"
#include "model/pid.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"
#include "planner/classification.hpp"
#include "planner/measure_steps.hpp"

namespace gpupart::cli {
namespace {

constexpr const char* kRateMeaning = "kernel launches + CUDA graph replays per second";

// What the rate is and is not, said once under every measurement.
constexpr const char* kRateNote =
    "rate = kernel launches + CUDA graph replays per second, counted by the shim over each dwell. It is the "
    "process's throughput only when every launch stands for the same work (a training step, a batch); a "
    "process paced by its input (a server waiting for requests), by the CPU between launches, or one that is "
    "idle shows no GPU speed in it.";

struct MeasureOptions {
    SnapshotOptions snapshot;
    std::string pid;
    int steps = 6;
    int dwell_ms = 2000;
    int floor = 2;
    bool json = false;
    bool save = true;
};

std::string time_text(double seconds) {
    if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
    if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
    return fmt::format("{:.3f} s", seconds);
}

std::string cpu_text(const std::optional<double>& cpu) { return cpu ? fmt::format("{:.0f}", *cpu) : "-"; }

// What the rates say about themselves, beyond the fit: say when the rate is not a throughput.
std::vector<std::string> rate_warnings(const std::vector<WalkStep>& steps, const std::optional<CurveFit>& fit, double dwell) {
    std::vector<std::string> warnings;
    if (steps.empty()) return warnings;
    double cpu_sum = 0;
    int cpu_count = 0;
    for (const WalkStep& step : steps) {
        if (step.submissions < 10)
            warnings.push_back(fmt::format("at {} TPCs the process made {} launch{} in {:.1f} s: too few for a rate (is it idle?); "
                                           "a longer --dwell counts more", step.tpcs, step.submissions,
                                           step.submissions == 1 ? "" : "es", dwell));
        if (step.cpu_percent) cpu_sum += *step.cpu_percent, ++cpu_count;
    }
    const double speedup = steps.back().rate() > 0 ? steps.front().rate() / steps.back().rate() : 0;
    if (cpu_count > 0 && cpu_sum / cpu_count >= 90 && speedup < 1.5)
        warnings.push_back(fmt::format("the process kept a whole CPU core busy ({:.0f}%) while its rate changed little with its "
                                       "TPCs: it is likely CPU-bound, so the rate is its CPU's pace, not its GPU's",
                                       cpu_sum / cpu_count));
    if (fit && fit->r_squared < 0.9)
        warnings.push_back(fmt::format("the fit is poor (R^2 {:.2f}, typical error {:.0f}%): the rate is noisy or does not follow "
                                       "a/m + b; a longer --dwell or more --steps helps", fit->r_squared,
                                       fit->rms_relative_residual * 100));
    if (fit && fit->b_clamped)
        warnings.push_back("the rate grew faster than the TPCs (b < 0, which the model cannot be): b was set to 0");
    return warnings;
}

std::string end_text(const WalkResult& walk, int pid, const TpcMask& original, bool partitioned) {
    if (!walk.started) return fmt::format("process {}'s TPCs were not changed", pid);
    if (walk.ended)
        return fmt::format("process {}'s TPCs {} put back (walk #{}, ended by #{}: nothing left to undo)", pid,
                           partitioned ? original.to_list() : "all", *walk.started, walk.ended->entry.id);
    return fmt::format("process {}'s TPCs were NOT put back: {}; `gpupart undo` reverts walk #{} once that is resolved", pid,
                       walk.restore_problem, *walk.started);
}

nlohmann::ordered_json steps_json(const std::vector<WalkStep>& steps) {
    auto out = nlohmann::ordered_json::array();
    for (const WalkStep& s : steps)
        out.push_back({{"tpcs", s.tpcs}, {"mask", s.mask.to_list()}, {"rate", s.rate()}, {"time_per_unit", s.rate() > 0 ? 1 / s.rate() : 0.0},
                       {"launches", s.submissions}, {"seconds", s.seconds},
                       {"cpu_percent", s.cpu_percent ? nlohmann::ordered_json(*s.cpu_percent) : nlohmann::ordered_json(nullptr)}});
    return out;
}

int run_measure(const MeasureOptions& options) {
    const int pid = parse_pid(options.pid);
    Controller controller = make_controller_for_process(options.snapshot, pid);
    const SystemState& state = controller.state();
    const ProcessState target = measured_process(state, pid);  // the state is refreshed during the walk
    const TpcMask real = real_tpcs(state.gpu);
    // All it may use: its own TPCs and those no other partitioned process holds.
    const TpcMask available = ((target.partitioned ? target.mask : real) | controller.free_for(pid)) & real;
    std::vector<TpcMask> masks;
    for (const int count : measure_tpc_counts(available.count(), options.floor, options.steps))
        masks.push_back(place_tpcs_packed(state.gpu, count, available));
    const double dwell = options.dwell_ms / 1000.0;
    if (!options.json) {
        fmt::print("measuring process {} ({}) on {} ({}): {} TPC counts from {} to {}, {:.1f} s each{}\n", pid,
                   one_line(target.command, 80), gpu_display_name(state.gpu), state.gpu_uuid, masks.size(), masks.front().count(),
                   masks.back().count(), dwell, target.simulated ? " (a simulated demo worker)" : "");
        fmt::print("Ctrl-C stops the walk and puts its TPCs back ({})\n\n", target.partitioned ? target.mask.to_list() : "all");
        fmt::print("{:>6} {:>10} {:>12} {:>5}  {}\n", "TPCS", "RATE/s", "TIME/UNIT", "CPU%", "MASK");
        std::fflush(stdout);
    }
    WalkOptions walk_options;
    walk_options.dwell = std::chrono::milliseconds(options.dwell_ms);
    walk_options.apply_timeout = std::max(std::chrono::milliseconds(5000), 2 * walk_options.dwell);
    if (!options.json)
        walk_options.on_step = [](const WalkStep& s) {
            fmt::print("{:>6} {:>10.1f} {:>12} {:>5}  {}\n", s.tpcs, s.rate(), s.rate() > 0 ? time_text(1 / s.rate()) : "-",
                       cpu_text(s.cpu_percent), s.mask.to_list());
            std::fflush(stdout);
        };
    WalkResult walk;
    {
        const StopSignals signals;  // from here until the TPCs are back, a signal stops the walk instead of gpupart
        walk = walk_masks(controller, pid, masks, walk_options);
    }
    const bool complete = walk.stopped.empty() && walk.steps.size() == masks.size();
    std::vector<CurvePoint> points;
    for (const WalkStep& s : walk.steps) points.push_back(CurvePoint::from_count(s.tpcs, s.submissions, s.seconds));
    std::optional<CurveFit> fit;
    std::optional<Classification> classification;
    std::string no_fit;
    const int total_tpcs = real.count();
    if (complete) {
        try {
            fit = fit_curve(points);
            classification = classify_measured(points, *fit, total_tpcs);
        } catch (const UserError& error) {
            no_fit = error.what();
        }
    }
    std::vector<std::string> warnings = rate_warnings(walk.steps, fit, dwell);
    std::optional<std::string> saved;
    if (fit && options.save) {
        StoredCurve curve{curve_identity(target, state), total_tpcs,
                          fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now())),
                          kRateMeaning, points, std::nullopt};
        saved = curve_store().save(curve);
    }
    const std::string ending = end_text(walk, pid, target.mask, target.partitioned);
    const bool ok = complete && fit && walk.restore_problem.empty();
    if (options.json) {
        nlohmann::ordered_json out{{"pid", pid}, {"command", target.command}, {"gpu", state.gpu_uuid}, {"total_tpcs", total_tpcs},
                                   {"simulated", target.simulated}, {"rate_meaning", kRateMeaning}, {"rate_note", kRateNote},
                                   {"steps", steps_json(walk.steps)}, {"complete", complete}, {"stopped", walk.stopped.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(walk.stopped)}};
        out["fit"] = fit ? nlohmann::ordered_json{{"a", fit->model.a}, {"b", fit->model.b}, {"r_squared", fit->r_squared},
                                                  {"rms_relative_residual", fit->rms_relative_residual}, {"b_clamped", fit->b_clamped}}
                         : nlohmann::ordered_json(nullptr);
        out["no_fit"] = no_fit.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(no_fit);
        out["class"] = classification ? nlohmann::ordered_json{{"intensity", to_string(classification->intensity)},
                                                               {"half_to_full_speedup", classification->half_to_full_speedup},
                                                               {"serial_share", classification->serial_share},
                                                               {"measured", classification->measured},
                                                               {"reason", classification->reason}}
                                      : nlohmann::ordered_json(nullptr);
        out["warnings"] = warnings;
        out["saved"] = saved ? nlohmann::ordered_json(*saved) : nlohmann::ordered_json(nullptr);
        out["journal_id"] = walk.started ? nlohmann::ordered_json(*walk.started) : nlohmann::ordered_json(nullptr);
        out["ended_by"] = walk.ended ? nlohmann::ordered_json(walk.ended->entry.id) : nlohmann::ordered_json(nullptr);
        out["restored"] = !walk.started || walk.ended.has_value();
        out["restore_problem"] = walk.restore_problem.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(walk.restore_problem);
        out["findings"] = findings_json(walk.findings);
        fmt::print("{}\n", json_answer(out));
    } else {
        fmt::print("\n{}\n", kRateNote);
        if (fit) {
            fmt::print("fit: C(m) = a/m + b, a = {:.4g} ms x TPC, b = {:.4g} ms (R^2 {:.4f}, typical error {:.1f}%, {} points, {}-{} TPCs)\n",
                       fit->model.a * 1e3, fit->model.b * 1e3, fit->r_squared, fit->rms_relative_residual * 100, fit->points,
                       fit->fewest_tpcs, fit->most_tpcs);
            fmt::print("class: {}\n", classification->reason);
        }
        for (const Finding& finding : walk.findings)
            if (finding.is_new && finding.severity != Severity::info) fmt::print("new {}\n", finding_line(finding));
        for (const std::string& warning : warnings) fmt::print("warning: {}\n", warning);
        if (saved) fmt::print("curve saved to {} (for `gpupart plan`)\n", *saved);
        else if (fit) fmt::print("curve not saved (--no-save)\n");
        fmt::print("{}\n", ending);
    }
    // What went wrong, in one line on stderr, as every refusal is said (after the table, also into one file).
    std::fflush(stdout);
    if (!walk.stopped.empty())
        fmt::print(stderr, "gpupart: measure of process {} stopped: {}; nothing saved\n", pid, walk.stopped);
    else if (!no_fit.empty())
        fmt::print(stderr, "gpupart: no curve for process {}: {}; nothing saved\n", pid, one_line(no_fit));
    if (!walk.restore_problem.empty()) fmt::print(stderr, "gpupart: {}\n", ending);
    return ok ? kExitOk : kExitRefused;
}

}  // namespace

Command add_measure_command(CLI::App& app) {
    auto options = std::make_shared<MeasureOptions>();
    CLI::App* measure = app.add_subcommand(
        "measure", "Measure a process's scaling curve: walk its TPCs down, count its rate, fit C(m) = a/m + b, save it for `plan`");
    measure->footer(
        "The walk is one journaled change: its first mask is a journal entry naming this gpupart, the later masks are not "
        "journaled one by one, and the end puts the TPCs back as an undo of that entry (so nothing is left to undo). "
        "Ctrl-C, SIGTERM and SIGHUP stop the walk and put the TPCs back; after a SIGKILL, `gpupart undo` does. "
        "Curves are saved per command line, user and GPU in $XDG_STATE_HOME/gpupart/curves (else ~/.local/state/gpupart/curves).");
    measure->add_option("PID", options->pid, "Process id (see `gpupart list`)")->required();
    measure->add_option("--steps", options->steps, "How many TPC counts to measure (default 6, at least 3)")->check(CLI::Range(3, 64));
    measure->add_option("--dwell", options->dwell_ms, "Milliseconds to count at each, after the shim applied the mask (default 2000)")
        ->check(CLI::Range(100, 600000));
    measure->add_option("--floor", options->floor, "Never fewer TPCs than this (default 2)")->check(CLI::Range(1, 1024));
    measure->add_flag("--save,!--no-save", options->save, "Save the curve for `gpupart plan` (default) or not");
    measure->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_snapshot_options(*measure, options->snapshot);
    return {measure, [options] { return run_measure(*options); }};
}

}  // namespace gpupart::cli
