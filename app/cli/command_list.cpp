// gpupart list: every partitioned process with its requested and applied mask, counters and liveness.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "csv_output.hpp"
#include "model/user_error.hpp"
#include "controller/finding.hpp"
#include "controller/mps_findings.hpp"
#include "controller/system_state.hpp"
#include "platform/mps_control.hpp"
#include "platform/mps_log.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "registry/registry.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string requested_text(const SlotRecord& record) {
    if (!record.control) return "(being changed)";
    return record.control->has_mask ? record.control->allowed.to_list() : "all";
}

std::string age_text(std::uint64_t realtime_ns) {
    if (realtime_ns == 0) return "never";
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const double seconds = static_cast<double>(static_cast<std::int64_t>(now) - static_cast<std::int64_t>(realtime_ns)) / 1e9;
    return seconds < 0 ? "now" : fmt::format("{:.1f}s ago", seconds);
}

Json entry_json(const RegistryEntry& entry) {
    Json out{{"slot", entry.path}};
    if (!entry.record) {
        out["problem"] = entry.problem;
        return out;
    }
    const SlotRecord& r = *entry.record;
    out["pid"] = r.pid;
    out["start_time"] = r.start_time;
    out["uid"] = r.uid;
    out["user"] = user_name(r.uid);
    out["command"] = r.command;
    out["liveness"] = std::string(to_string(entry.liveness));
    out["shim_version"] = r.shim_version;
    out["start_rule"] = r.start_rule;
    if (r.control)
        out["requested"] = Json{{"partitioned", r.control->has_mask}, {"tpcs", r.control->allowed.to_list()},
                                {"mask", r.control->allowed.to_hex_padded()}, {"generation", r.control->generation},
                                {"writer_pid", r.control->writer_pid}, {"writer_uid", r.control->writer_uid},
                                {"writer_died", r.writer_died}};
    else
        out["requested"] = nullptr;
    if (r.status)
        out["shim"] = Json{{"state", std::string(to_string(r.status->state))}, {"state_code", static_cast<int>(r.status->state)},
                           {"descriptor_version", r.status->descriptor_version},
                           {"applied_generation", r.status->applied_generation}, {"mask_applied", r.status->mask_applied},
                           {"applied_tpcs", r.status->applied.to_list()}, {"pending", mask_change_pending(r)}};
    else
        out["shim"] = nullptr;
    out["counters"] = Json{{"launches", r.counters.launches}, {"masked_launches", r.counters.masked_launches},
                           {"last_launch_realtime_ns", r.counters.last_launch_ns}, {"errors", r.counters.errors},
                           {"refused_masks", r.counters.refused_masks}};
    const GraphStatus g = graph_status(r);
    out["graphs"] = Json{{"tracking", std::string(to_string(g.tracking))}, {"execs", g.execs}, {"current", g.current},
                         {"older", g.older}, {"unfollowable", g.unfollowable}, {"device_launch", g.device_launch},
                         {"remasks", g.remasks}, {"remask_failures", g.remask_failures}};
    return out;
}

// `list --format csv`: a slot that cannot be read is a row too, with only slot and problem filled.
std::string of_record(const RegistryEntry& entry, const std::function<std::string(const SlotRecord&)>& value) {
    return entry.record ? value(*entry.record) : "";
}

const std::vector<CsvColumn<RegistryEntry>>& list_columns() {
    using R = const SlotRecord&;
    using E = const RegistryEntry&;
    static const std::vector<CsvColumn<RegistryEntry>> columns = {
        {"pid", [](E e) { return of_record(e, [](R r) { return std::to_string(r.pid); }); }},
        {"start_time", [](E e) { return of_record(e, [](R r) { return std::to_string(r.start_time); }); }},
        {"uid", [](E e) { return of_record(e, [](R r) { return std::to_string(r.uid); }); }},
        {"user", [](E e) { return of_record(e, [](R r) { return user_name(r.uid); }); }},
        {"liveness", [](E e) { return e.record ? std::string(to_string(e.liveness)) : ""; }},
        {"tpcs", [](E e) { return of_record(e, [](R r) { return requested_text(r); }); }},
        {"mask", [](E e) { return of_record(e, [](R r) { return r.control ? r.control->allowed.to_hex_padded() : ""; }); }},
        {"applied", [](E e) { return of_record(e, [](R r) { return applied_text(r); }); }},
        {"shim", [](E e) { return of_record(e, [](R r) { return r.status ? std::string(to_string(r.status->state)) : ""; }); }},
        {"pending", [](E e) { return of_record(e, [](R r) { return r.status ? (mask_change_pending(r) ? "yes" : "no") : ""; }); }},
        {"writer_died", [](E e) { return of_record(e, [](R r) { return r.writer_died ? "yes" : "no"; }); }},
        {"launches", [](E e) { return of_record(e, [](R r) { return std::to_string(r.counters.launches); }); }},
        {"masked_launches", [](E e) { return of_record(e, [](R r) { return std::to_string(r.counters.masked_launches); }); }},
        {"errors", [](E e) { return of_record(e, [](R r) { return std::to_string(r.counters.errors); }); }},
        {"last_launch_realtime_ns", [](E e) { return of_record(e, [](R r) { return std::to_string(r.counters.last_launch_ns); }); }},
        {"graphs", [](E e) { return of_record(e, [](R r) { return graph_cell(graph_status(r)); }); }},
        {"command", [](E e) { return of_record(e, [](R r) { return r.command; }); }},
        {"slot", [](E e) { return e.path; }},
        {"problem", [](E e) { return e.record ? "" : e.problem; }},
    };
    return columns;
}

constexpr const char* kListDefaultFields = "pid,user,liveness,tpcs,applied,launches,command";

}  // namespace

Command add_list_command(CLI::App& app) {
    struct ListOptions {
        bool json = false;
        bool keep = false;
        CsvOptions csv;
    };
    auto options = std::make_shared<ListOptions>();
    CLI::App* list = app.add_subcommand("list", "List partitioned processes, their masks, counters and liveness");
    CLI::Option* json = list->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_csv_options(*list, options->csv, csv_names(list_columns()), kListDefaultFields, json);
    list->add_flag("--keep-exited", options->keep, "Do not remove the slots of processes that have exited");
    return {list, [options] {
                const Registry registry(Registry::default_directory());
                const int reclaimed = options->keep ? 0 : registry.collect_garbage();
                const auto entries = registry.list();
                if (options->csv.wanted()) {
                    print_csv(options->csv, list_columns(), kListDefaultFields, entries);
                    return 0;
                }
                const MpsState mps = mps_status();
                // A fatal MPS error took every client of the server down, partitioned or not: say it here too.
                SystemState mps_state;
                mps_state.mps_running = mps.control_running;
                if (mps.control_running) gather_mps_log(mps_state, mps_log_directory(), mps.server_pids);
                const std::vector<Finding> mps_problems = mps_findings(mps_state);
                if (options->json) {
                    Json out{{"registry", registry.directory()}, {"reclaimed_exited_slots", reclaimed},
                             {"mps", Json{{"running", mps.control_running}, {"detail", mps.detail},
                                          {"findings", findings_json(mps_problems)}}}};
                    out["processes"] = Json::array();
                    for (const auto& entry : entries) out["processes"].push_back(entry_json(entry));
                    fmt::print("{}\n", out.dump(2, ' ', false, kJsonUtf8Errors));
                    return 0;
                }
                fmt::print("registry {} · MPS {}{}\n", registry.directory(), mps.detail,
                           reclaimed ? fmt::format(" · reclaimed {} exited slot{}", reclaimed, reclaimed == 1 ? "" : "s") : "");
                for (const Finding& finding : mps_problems) fmt::print("{}\n", one_line(finding_line(finding)));
                if (entries.empty()) {
                    // Not "no process" alone when the registry is not there at all: say which it is.
                    fmt::print("no partitioned process{} (start one with `gpupart run --tpcs EXPR -- CMD`)\n",
                               registry.check_root() ? "" : fmt::format(": registry {} does not exist yet", one_line(registry.directory())));
                    return 0;
                }
                // Masks vary from "0-3" to a dozen ranges: size those columns to what is there.
                std::size_t tpcs_width = 4, applied_width = 7;
                for (const auto& entry : entries)
                    if (entry.record) {
                        tpcs_width = std::max(tpcs_width, requested_text(*entry.record).size());
                        applied_width = std::max(applied_width, applied_text(*entry.record).size());
                    }
                fmt::print("{:>8} {:<10} {:<8} {:<{}} {:<{}} {:>10} {:>12}  {:<28} {:<16} {}\n", "PID", "USER", "STATE", "TPCS",
                           tpcs_width, "APPLIED", applied_width, "LAUNCHES", "LAST", "SHIM", "GRAPHS", "COMMAND");
                for (const auto& entry : entries) {
                    if (!entry.record) {
                        fmt::print("{:>8} {}\n", "?", one_line(entry.problem));
                        continue;
                    }
                    const SlotRecord& r = *entry.record;
                    const std::string shim = r.writer_died ? "a writer died mid-change: next set completes it"
                                             : r.status ? std::string(to_string(r.status->state)) : "(publishing)";
                    fmt::print("{:>8} {:<10} {:<8} {:<{}} {:<{}} {:>10} {:>12}  {:<28} {:<16} {}\n", r.pid,
                               one_line(user_name(r.uid), 10), entry.liveness == Liveness::alive ? "alive" : "exited",
                               requested_text(r), tpcs_width, applied_text(r), applied_width,
                               r.counters.launches, age_text(r.counters.last_launch_ns), shim.substr(0, 28),
                               graph_cell(graph_status(r)).substr(0, 16), one_line(r.command, 60));
                }
                // Graph execs that still carry an older mask, or never can follow, are said in words below the table.
                for (const auto& entry : entries)
                    if (entry.record && entry.liveness == Liveness::alive) {
                        const GraphStatus g = graph_status(*entry.record);
                        if (g.older > 0 || g.unfollowable > 0 || graphs_not_followed(g))
                            fmt::print("  process {}: {}\n", entry.record->pid, graph_sentence(g));
                    }
                return 0;
            }};
}

}  // namespace gpupart::cli
