// gpupart list: every partitioned process with its requested and applied mask, counters and liveness.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "app_masks_output.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "csv_output.hpp"
#include "model/user_error.hpp"
#include "controller/finding.hpp"
#include "controller/mps_findings.hpp"
#include "controller/system_state.hpp"
#include "model/gpu_queries.hpp"
#include "platform/mps_control.hpp"
#include "platform/mps_log.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "registry/registry.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

// How the shim confines the process's kernels (docs/launch-path.md); null where its shim does not say.
Json launch_path_json(gpupart_launch_path path) {
    switch (path) {
        case GPUPART_LAUNCH_PATH_CALLBACK: return "callback";
        case GPUPART_LAUNCH_PATH_STREAMS: return "streams";
        case GPUPART_LAUNCH_PATH_STREAMS_AND_CALLBACK: return "streams+callback";
        case GPUPART_LAUNCH_PATH_NOT_SAID: break;
    }
    return nullptr;
}

// One row of the table: a process on one GPU (a process on no GPU yet has one row, GPU "").
struct ListRow {
    const RegistryEntry* entry = nullptr;
    std::string gpu;
};

// Live processes are rows whatever their number (each is a real process); slots of exited processes and
// files that cannot be used are anybody's to plant, so at most this many of each are shown, then a count.
constexpr std::size_t kShownPlanted = 50;

struct ShownEntries {
    std::vector<const RegistryEntry*> entries;
    std::size_t exited_left_out = 0;
    std::size_t problems_left_out = 0;
    std::string left_out_line() const {  // "" when nothing was left out
        std::vector<std::string> parts;
        if (exited_left_out > 0) parts.push_back(fmt::format("{} more slots of exited processes", exited_left_out));
        if (problems_left_out > 0) parts.push_back(fmt::format("{} more files that cannot be used", problems_left_out));
        if (parts.empty()) return "";
        return fmt::format("and {}: not shown (at most {} of each)", fmt::join(parts, " and "), kShownPlanted);
    }
};

ShownEntries shown_entries(const std::vector<RegistryEntry>& entries) {
    ShownEntries shown;
    std::size_t exited = 0, problems = 0;
    for (const auto& entry : entries) {
        if (!entry.record && ++problems > kShownPlanted) {
            ++shown.problems_left_out;
            continue;
        }
        if (entry.record && entry.liveness != Liveness::alive && ++exited > kShownPlanted) {
            ++shown.exited_left_out;
            continue;
        }
        shown.entries.push_back(&entry);
    }
    return shown;
}

std::vector<ListRow> list_rows(const std::vector<const RegistryEntry*>& entries, const std::optional<std::string>& only_gpu) {
    std::vector<ListRow> rows;
    for (const RegistryEntry* entry : entries) {
        if (!entry->record) {
            rows.push_back({entry, ""});
            continue;
        }
        const std::vector<std::string> gpus = gpus_of(*entry->record);
        if (gpus.empty()) rows.push_back({entry, ""});  // not on a GPU yet: it may open any, so every --gpu lists it
        for (const auto& uuid : gpus)
            if (!only_gpu || *only_gpu == uuid) rows.push_back({entry, uuid});
    }
    return rows;
}

std::string requested_text(const SlotRecord& record, const std::string& gpu) {
    if (!record.control) return "(being changed)";
    const GpuControl* entry = record.control->gpu(gpu);
    // A GPU whose map is not known (or a mask with bits that are no TPC) keeps descriptor bits: "bits:0x...".
    return entry != nullptr && entry->has_mask ? mask_text(entry->allowed, entry->numbered) : "all";
}

// The TPCS cell: the operator's mask, marked "+app" where the program chooses its own masks under it.
std::string tpcs_cell(const SlotRecord& record, const std::string& gpu) {
    return requested_text(record, gpu) + (record.app.in_use ? " +app" : "");
}

std::string short_gpu(const std::string& uuid) { return uuid.empty() ? "-" : uuid.substr(0, 12); }  // "GPU-263da6ff"

std::string shim_text(const SlotRecord& record, const std::string& gpu) {
    if (record.writer_died) return "a writer died mid-change: next set completes it";
    const GpuStatus* status = record.status ? record.status->gpu(gpu) : nullptr;
    if (status == nullptr || record.status->state == GPUPART_SHIM_CALLBACK_FAILED ||
        record.status->state == GPUPART_SHIM_BAD_ENVIRONMENT)
        return std::string(to_string(record.status ? record.status->state : GPUPART_SHIM_WAITING));
    return status->publishing ? "(publishing)" : std::string(to_string(status->state));
}

std::string age_text(std::uint64_t realtime_ns) {
    if (realtime_ns == 0) return "never";
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const double seconds = static_cast<double>(static_cast<std::int64_t>(now) - static_cast<std::int64_t>(realtime_ns)) / 1e9;
    return seconds < 0 ? "now" : fmt::format("{:.1f}s ago", seconds);
}

Json gpu_json(const SlotRecord& r, const std::string& uuid) {
    Json out{{"uuid", uuid}};
    const GpuControl* control = r.control ? r.control->gpu(uuid) : nullptr;
    const bool partitioned = control != nullptr && control->has_mask;
    out["requested"] = Json{{"partitioned", partitioned}, {"tpcs", partitioned ? mask_text(control->allowed, control->numbered) : "all"},
                            {"mask", partitioned ? Json(control->allowed.to_hex_padded()) : Json(nullptr)},
                            {"real_tpcs", control != nullptr ? Json(control->real_tpcs.to_hex_padded()) : Json(nullptr)}};
    const GpuStatus* status = r.status ? r.status->gpu(uuid) : nullptr;
    if (status != nullptr)
        out["shim"] = Json{{"context", true}, {"publishing", status->publishing},
                           {"state", std::string(to_string(status->state))}, {"state_code", static_cast<int>(status->state)},
                           {"descriptor_version", status->descriptor_version},
                           {"applied_generation", status->applied_generation}, {"mask_applied", status->mask_applied},
                           {"applied_tpcs", mask_text(status->applied, status->numbered)}, {"pending", mask_change_pending(r, uuid)},
                           {"applied_realtime_ns", status->applied_ns},
                           {"launches", status->launches}, {"masked_launches", status->masked_launches}};
    else
        out["shim"] = Json{{"context", false}};
    out["app_effective"] = app_effective_json(r, uuid);
    return out;
}

Json entry_json(const RegistryEntry& entry, const std::optional<std::string>& only_gpu) {
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
    out["job"] = r.job;  // the scheduler job step ($GPUPART_JOB: "slurm:<job>.<step>"), "" if none
    out["copies"] = entry.copies;  // other files of its owner's naming this process: ignored
    if (r.control)
        out["requested"] = Json{{"generation", r.control->generation}, {"writer_pid", r.control->writer_pid},
                                {"writer_uid", r.control->writer_uid}, {"writer_died", r.writer_died},
                                {"written_realtime_ns", r.control->written_ns}};
    else
        out["requested"] = nullptr;
    const gpupart_shim_state state = r.status ? r.status->state : GPUPART_SHIM_WAITING;
    out["shim"] = Json{{"state", std::string(to_string(state))}, {"state_code", static_cast<int>(state)},
                       {"launch_path", launch_path_json(r.status ? r.status->launch_path : GPUPART_LAUNCH_PATH_NOT_SAID)}};
    // Every GPU the process has a mask for or a context on, by UUID (with --gpu, that one only).
    out["gpus"] = Json::array();
    for (const auto& uuid : gpus_of(r))
        if (!only_gpu || *only_gpu == uuid) out["gpus"].push_back(gpu_json(r, uuid));
    out["counters"] = Json{{"launches", r.counters.launches}, {"masked_launches", r.counters.masked_launches},
                           {"last_launch_realtime_ns", r.counters.last_launch_ns}, {"errors", r.counters.errors},
                           {"refused_masks", r.counters.refused_masks}};
    const GraphStatus g = graph_status(r);
    out["graphs"] = Json{{"tracking", std::string(to_string(g.tracking))}, {"execs", g.execs}, {"current", g.current},
                         {"older", g.older}, {"unfollowable", g.unfollowable}, {"device_launch", g.device_launch},
                         {"remasks", g.remasks}, {"remask_failures", g.remask_failures},
                         {"remask", g.ahead ? "ahead" : "at launch"}};
    out["app_masks"] = app_masks_json(r.app);
    return out;
}

// `list --format csv`: a slot that cannot be read is a row too, with only slot and problem filled.
std::string of_record(const ListRow& row, const std::function<std::string(const SlotRecord&, const std::string&)>& value) {
    return row.entry->record ? value(*row.entry->record, row.gpu) : "";
}

const std::vector<CsvColumn<ListRow>>& list_columns() {
    using R = const SlotRecord&;
    using G = const std::string&;
    using E = const ListRow&;
    static const std::vector<CsvColumn<ListRow>> columns = {
        {"pid", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.pid); }); }},
        {"start_time", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.start_time); }); }},
        {"uid", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.uid); }); }},
        {"user", [](E e) { return of_record(e, [](R r, G) { return user_name(r.uid); }); }},
        {"liveness", [](E e) { return e.entry->record ? std::string(to_string(e.entry->liveness)) : ""; }},
        {"gpu", [](E e) { return e.gpu; }},
        {"tpcs", [](E e) { return of_record(e, [](R r, G g) { return requested_text(r, g); }); }},
        {"mask", [](E e) { return of_record(e, [](R r, G g) {
             const GpuControl* c = r.control ? r.control->gpu(g) : nullptr;
             return c != nullptr && c->has_mask ? c->allowed.to_hex_padded() : std::string(); }); }},
        {"applied", [](E e) { return of_record(e, [](R r, G g) { return applied_text(r, g); }); }},
        {"shim", [](E e) { return of_record(e, [](R r, G g) { return shim_text(r, g); }); }},
        {"pending", [](E e) { return of_record(e, [](R r, G g) { return mask_change_pending(r, g) ? "yes" : "no"; }); }},
        {"writer_died", [](E e) { return of_record(e, [](R r, G) { return r.writer_died ? "yes" : "no"; }); }},
        {"launches", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.counters.launches); }); }},
        {"masked_launches", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.counters.masked_launches); }); }},
        {"errors", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.counters.errors); }); }},
        {"last_launch_realtime_ns", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.counters.last_launch_ns); }); }},
        {"graphs", [](E e) { return of_record(e, [](R r, G) { return graph_cell(graph_status(r)); }); }},
        {"app_masks", [](E e) { return of_record(e, [](R r, G) { return r.app.in_use ? "yes" : "no"; }); }},
        {"app_global", [](E e) { return of_record(e, [](R r, G) {
             return r.app.in_use && !r.app.publishing && r.app.global_set ? r.app.global_allowed().to_list() : std::string(); }); }},
        {"app_streams", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.app.streams.size() + r.app.streams_hidden); }); }},
        {"app_outside_bound", [](E e) { return of_record(e, [](R r, G) { return std::to_string(r.app.outside_bound); }); }},
        {"job", [](E e) { return of_record(e, [](R r, G) { return r.job; }); }},
        {"command", [](E e) { return of_record(e, [](R r, G) { return r.command; }); }},
        {"slot", [](E e) { return e.entry->path; }},
        {"problem", [](E e) { return e.entry->record ? "" : e.entry->problem; }},
    };
    return columns;
}

constexpr const char* kListDefaultFields = "pid,user,liveness,gpu,tpcs,applied,launches,command";

}  // namespace

Command add_list_command(CLI::App& app) {
    struct ListOptions {
        bool json = false;
        bool keep = false;
        std::string gpu;
        std::optional<std::string> snapshot;
        CsvOptions csv;
    };
    auto options = std::make_shared<ListOptions>();
    CLI::App* list = app.add_subcommand("list", "List partitioned processes, their masks, counters and liveness");
    CLI::Option* json = list->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_csv_options(*list, options->csv, csv_names(list_columns()), kListDefaultFields, json);
    list->add_flag("--keep-exited", options->keep, "Do not remove the slots of processes that have exited");
    list->add_option("--gpu", options->gpu, "Only processes on this GPU (index, UUID or a unique prefix, PCI bus id), and those "
                                            "on no GPU yet");
    list->add_option("--snapshot", options->snapshot,
                     "Number the masks with this recording's GPU maps (a JSON file or builtin:...), for GPUs this machine's "
                     "topology does not give (default: this machine's)");
    return {list, [options] {
                // Slots hold descriptor bits: a GPU's masks are TPC numbers only through its map.
                const std::vector<Gpu> gpus = options->snapshot ? load_chosen(SnapshotOptions{options->snapshot, ""}).snapshot.gpus
                                                                : machine_gpus_for_numbers();
                const Registry registry(Registry::default_directory(), gpus);
                const int reclaimed = options->keep ? 0 : registry.collect_garbage();
                const auto entries = registry.list();
                std::optional<std::string> only_gpu;
                if (!options->gpu.empty()) {
                    // A UUID needs no snapshot; an index or bus id is looked up in this machine's.
                    if (options->gpu.size() == 40 && (options->gpu.starts_with("GPU-") || options->gpu.starts_with("gpu-"))) {
                        only_gpu = uuid_text(uuid_words("GPU-" + options->gpu.substr(4)));
                    } else {
                        const ChosenSnapshot chosen = load_chosen(SnapshotOptions{options->snapshot, ""});
                        only_gpu = gpu_key(select_gpu(chosen, gpu_index(chosen, options->gpu)));
                    }
                }
                const ShownEntries shown = shown_entries(entries);
                const std::vector<ListRow> rows = list_rows(shown.entries, only_gpu);
                if (options->csv.wanted()) {
                    print_csv(options->csv, list_columns(), kListDefaultFields, rows);
                    if (!shown.left_out_line().empty()) fmt::print(stderr, "gpupart: {}\n", shown.left_out_line());
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
                    for (const RegistryEntry* entry : shown.entries) {
                        if (only_gpu && entry->record && !counts_on_gpu(*entry->record, *only_gpu)) continue;
                        out["processes"].push_back(entry_json(*entry, only_gpu));
                    }
                    out["exited_left_out"] = shown.exited_left_out;
                    out["problems_left_out"] = shown.problems_left_out;
                    fmt::print("{}\n", json_answer(out));
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
                for (const ListRow& row : rows)
                    if (row.entry->record) {
                        tpcs_width = std::max(tpcs_width, tpcs_cell(*row.entry->record, row.gpu).size());
                        applied_width = std::max(applied_width, applied_text(*row.entry->record, row.gpu).size());
                    }
                // A JOB column (Slurm's "slurm:<job>.<step>") only where some process belongs to a scheduler job.
                std::size_t job_width = 0;
                for (const ListRow& row : rows)
                    if (row.entry->record && !row.entry->record->job.empty())
                        job_width = std::max<std::size_t>({job_width, 3, row.entry->record->job.size()});
                const auto job_cell = [&](const std::string& job) { return job_width ? fmt::format("{:<{}} ", job, job_width) : ""; };
                fmt::print("{:>8} {:<10} {:<8} {:<12} {:<{}} {:<{}} {:>10} {:>12}  {:<28} {:<16} {}{}\n", "PID", "USER", "STATE",
                           "GPU", "TPCS", tpcs_width, "APPLIED", applied_width, "LAUNCHES", "LAST", "SHIM", "GRAPHS",
                           job_cell("JOB"), "COMMAND");
                for (const ListRow& row : rows) {
                    if (!row.entry->record) {
                        fmt::print("{:>8} {}\n", "?", one_line(row.entry->problem));
                        continue;
                    }
                    const SlotRecord& r = *row.entry->record;
                    fmt::print("{:>8} {:<10} {:<8} {:<12} {:<{}} {:<{}} {:>10} {:>12}  {:<28} {:<16} {}{}\n", r.pid,
                               one_line(user_name(r.uid), 10), row.entry->liveness == Liveness::alive ? "alive" : "exited",
                               short_gpu(row.gpu), tpcs_cell(r, row.gpu), tpcs_width, applied_text(r, row.gpu),
                               applied_width, r.counters.launches, age_text(r.counters.last_launch_ns),
                               shim_text(r, row.gpu).substr(0, 28), graph_cell(graph_status(r)).substr(0, 16),
                               job_cell(r.job), one_line(r.command, 60));
                }
                if (!shown.left_out_line().empty()) fmt::print("{:>8} {}\n", "", shown.left_out_line());
                // Graph execs that still carry an older mask, or never can follow, are said in words below the table;
                // so are the masks a program chose itself (marked "+app" in TPCS), with what each runs on, and
                // copies of a slot (one line per process, however many there are).
                for (const auto& entry : entries)
                    if (entry.record && entry.liveness == Liveness::alive) {
                        if (entry.copies > 0)
                            fmt::print("  process {}: {} more file{} of {} name{} it too: copies, ignored\n", entry.record->pid,
                                       entry.copies, entry.copies == 1 ? "" : "s", one_line(user_name(entry.record->uid)),
                                       entry.copies == 1 ? "s" : "");
                        const GraphStatus g = graph_status(*entry.record);
                        if (g.older > 0 || g.unfollowable > 0 || graphs_not_followed(g))
                            fmt::print("  process {}: {}\n", entry.record->pid, graph_sentence(g));
                        if (only_gpu && !counts_on_gpu(*entry.record, *only_gpu)) continue;
                        for (const std::string& line : app_masks_lines(*entry.record, only_gpu)) fmt::print("{}\n", line);
                    }
                return 0;
            }};
}

}  // namespace gpupart::cli
