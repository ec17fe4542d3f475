// gpupart smlp [NAME] [--json]: the SMLP components of the registry (smlp/smlp_file.hpp), their queues
// and who holds which TPCs, read without locking them (a component in the middle of a change says so).
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "registry/registry.hpp"
#include "smlp/smlp_file.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string_view inheritance_word(gpupart_smlp_inheritance inheritance) {
    switch (inheritance) {
        case GPUPART_SMLP_INHERIT_NONE: return "none";
        case GPUPART_SMLP_INHERIT_APPLIED: return "applied";
        case GPUPART_SMLP_INHERIT_REFUSED: return "refused";
    }
    return "none";
}

Json request_json(const SmlpRequest& r, std::uint64_t now) {
    const bool held = r.queue == GPUPART_SMLP_SQ;
    Json out{{"record", r.record}, {"pid", r.pid}, {"start_time", r.start_time}, {"tid", r.tid},
             {"alive", r.liveness == Liveness::alive}, {"liveness", std::string(to_string(r.liveness))},
             {"priority", r.priority}, {"ticket", r.ticket}, {"label", r.label},
             {"issued_realtime_ns", r.issued_ns}, {"satisfied_realtime_ns", held ? Json(r.satisfied_ns) : Json(nullptr)}};
    const std::uint64_t since = held ? r.satisfied_ns : r.issued_ns;
    out[held ? "held_ns" : "waited_ns"] = since != 0 && now >= since ? Json(now - since) : Json(nullptr);
    out["granted_tpcs"] = held ? Json(r.granted.to_list()) : Json(nullptr);
    out["granted_mask"] = held ? Json(r.granted.to_hex_padded()) : Json(nullptr);
    out["granted_count"] = r.granted_tpcs;
    out["levels"] = r.levels;
    out["tolerance_ppm"] = r.tolerance_ppm;
    out["inheritance"] = std::string(inheritance_word(r.inheritance));
    out["inherited_priority"] = r.inherited_priority;
    return out;
}

Json component_json(const SmlpComponent& c, std::uint64_t now) {
    Json out{{"path", c.path}, {"name", c.name}, {"owner_uid", c.owner}, {"owner", user_name(c.owner)},
             {"gpu", c.gpu.empty() ? Json(nullptr) : Json(c.gpu)}, {"tpcs", c.tpcs.to_list()}, {"mask", c.tpcs.to_hex_padded()},
             {"size", c.size}, {"h", c.granularity}, {"fq_length", c.fq_length},
             {"free_tpcs", c.changing ? Json(nullptr) : Json(c.free.to_list())}, {"changing", c.changing},
             {"created_realtime_ns", c.created_ns},
             {"stats", Json{{"satisfied", c.satisfied}, {"finalized", c.finalized}, {"reclaimed", c.reclaimed},
                            {"inheritance_applied", c.inheritance_applied}, {"inheritance_refused", c.inheritance_refused},
                            {"max_wait_ns", c.max_wait_ns}}}};
    for (const auto& [key, queue] : {std::pair{"sq", &c.sq}, std::pair{"fq", &c.fq}, std::pair{"pq", &c.pq}}) {
        out[key] = Json::array();
        for (const SmlpRequest& r : *queue) out[key].push_back(request_json(r, now));
    }
    return out;
}

void print_component(const SmlpComponent& c, std::uint64_t now) {
    fmt::print("{} ({}) · {} · TPCs {} (H {}, h {}, M {}) · {}\n", c.name, one_line(user_name(c.owner)),
               c.gpu.empty() ? "GPU not said" : c.gpu.substr(0, 12), c.tpcs.to_list(), c.size, c.granularity, c.fq_length,
               c.changing ? "being changed" : "free " + (c.free.empty() ? std::string("none") : c.free.to_list()));
    fmt::print("  satisfied {} · finalized {} · reclaimed {} · longest wait {} · inheritance applied {}, refused {}\n", c.satisfied,
               c.finalized, c.reclaimed, c.max_wait_ns == 0 ? "-" : smlp_duration_text(1, 1 + c.max_wait_ns),
               c.inheritance_applied, c.inheritance_refused);
    if (c.changing) {
        fmt::print("  a process was changing its queues at every read (or died doing so: the next lock repairs it)\n");
        return;
    }
    if (c.sq.empty() && c.fq.empty() && c.pq.empty()) {
        fmt::print("  no request: every TPC is free\n");
        return;
    }
    fmt::print("  {:<5} {:>8} {:>8} {:>5} {:>7} {:<12} {:<16} {:<24} {}\n", "QUEUE", "PID", "TID", "PRIO", "TICKET", "TPCS", "TIME", "LABEL",
               "NOTE");
    for (const auto* queue : {&c.sq, &c.fq, &c.pq})
        for (const SmlpRequest& r : *queue) {
            const bool held = r.queue == GPUPART_SMLP_SQ;
            std::string note = r.liveness == Liveness::alive ? inheritance_text(r) : "exited: its record is freed at the next change";
            // The label whole, escaped (at most 31 bytes, a few times that escaped): a longer one shifts NOTE.
            fmt::print("  {:<5} {:>8} {:>8} {:>5} {:>7} {:<12} {:<16} {:<24} {}\n", to_string(r.queue), r.pid, r.tid, r.priority, r.ticket,
                       held ? r.granted.to_list() : "-",
                       fmt::format("{} {}", held ? "held" : "waiting", smlp_duration_text(held ? r.satisfied_ns : r.issued_ns, now)),
                       one_line(r.label), note);
        }
}

}  // namespace

Command add_smlp_command(CLI::App& app) {
    struct SmlpOptions {
        bool json = false;
        std::string name;
    };
    auto options = std::make_shared<SmlpOptions>();
    CLI::App* smlp = app.add_subcommand(
        "smlp", "List SMLP components (libgpupart.so's locking protocol): their TPCs, the holders (SQ) and the waiting "
                "requests (FQ, PQ), read without locking them");
    smlp->add_option("name", options->name, "Only the components of this name");
    smlp->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {smlp, [options] {
                const Registry registry(Registry::default_directory());
                if (!options->name.empty() && !smlp_name_valid(options->name))
                    throw UserError(fmt::format("'{}' is not a component name ([A-Za-z0-9_.-], 1 to 63 characters, not "
                                                "starting with '.')", one_line(options->name)));
                std::vector<SmlpEntry> entries;
                for (SmlpEntry& entry : list_smlp_components(registry.directory()))
                    if (options->name.empty() || (entry.component && entry.component->name == options->name))
                        entries.push_back(std::move(entry));
                const bool found = std::any_of(entries.begin(), entries.end(), [](const SmlpEntry& e) { return e.component.has_value(); });
                if (!options->name.empty() && !found)
                    throw UserError(fmt::format("no SMLP component '{}' in registry {}", options->name, one_line(registry.directory())));
                const std::uint64_t now = realtime_now_ns();
                if (options->json) {
                    Json out{{"registry", registry.directory()}, {"components", Json::array()}, {"problems", Json::array()}};
                    for (const SmlpEntry& entry : entries) {
                        if (entry.component)
                            out["components"].push_back(component_json(*entry.component, now));
                        else
                            out["problems"].push_back(Json{{"path", entry.path}, {"problem", entry.problem}});
                    }
                    fmt::print("{}\n", json_answer(out));
                    return 0;
                }
                fmt::print("registry {}\n", one_line(registry.directory()));
                if (entries.empty()) fmt::print("no SMLP component (a program makes one with gpupart_smlp_open, docs/api.md)\n");
                for (const SmlpEntry& entry : entries) {
                    if (entry.component)
                        print_component(*entry.component, now);
                    else
                        fmt::print("? {}\n", one_line(entry.problem));
                }
                return 0;
            }};
}

}  // namespace gpupart::cli
