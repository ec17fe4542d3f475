// gpupart profile list|show|save|apply|diff|delete|disarm: named sets of partition rules.
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "controller/profile_apply.hpp"
#include "controller/profile_capture.hpp"
#include "controller/profile_store.hpp"
#include "model/user_error.hpp"
#include "plan_output.hpp"

namespace gpupart::cli {
namespace {

struct ProfileOptions {
    SnapshotOptions snapshot;
    std::string verb;
    std::string name;
    bool json = false;
    bool dry_run = false;
    bool force = false;
};

nlohmann::ordered_json drift_json(const StoredProfile& stored, const ProfileDrift& drift) {
    auto processes = nlohmann::ordered_json::array();
    for (const ProcessDrift& p : drift.processes)
        processes.push_back({{"pid", p.pid},
                             {"start_time", p.start_time},
                             {"command", p.command},
                             {"tpcs", p.now_tpcs},
                             {"profile_tpcs", p.profile_tpcs ? nlohmann::ordered_json(*p.profile_tpcs) : nlohmann::ordered_json(nullptr)},
                             {"matches", !p.profile_tpcs || *p.profile_tpcs == p.now_tpcs}});
    return {{"profile", stored.profile.name},
            {"path", stored.path},
            {"drifted", drift.drifted},
            {"processes", processes},
            {"rules", drift.rules ? nlohmann::ordered_json(*drift.rules) : nlohmann::ordered_json(nullptr)},
            {"errors", drift.errors}};
}

int run_profile(const ProfileOptions& options) {
    const ProfileStore store = ProfileStore::standard();
    if (options.verb == "list") {
        std::vector<std::string> problems;
        const auto profiles = store.list(&problems);
        if (options.json) {
            auto out = nlohmann::ordered_json::array();
            for (const auto& p : profiles)
                out.push_back({{"name", p.profile.name}, {"path", p.path}, {"system", p.system},
                               {"rules", p.profile.rules.size()}, {"description", p.profile.description}});
            fmt::print("{}\n", json_answer(nlohmann::ordered_json{{"profiles", out}, {"problems", problems}}));
            return 0;
        }
        if (profiles.empty()) fmt::print("no profile yet (in {} or {}): `gpupart profile save NAME` captures the current partitions\n",
                                         store.user_dir, store.system_dir);
        for (const auto& p : profiles)
            fmt::print("{:<20} {:>2} rules  {:<6}  {}\n", one_line(p.profile.name), p.profile.rules.size(), p.system ? "system" : "user",
                       one_line(p.profile.description));
        for (const auto& problem : problems) fmt::print(stderr, "gpupart: {}\n", one_line(problem));
        return 0;
    }
    if (options.verb == "show") {
        const StoredProfile stored = store.load(options.name);
        // With --json only the profile itself, so `gpupart profile show X --json | jq` works; the path
        // comment is for people (and one_line: a path is a file name anyone may have chosen).
        if (!options.json) fmt::print("# {}\n", one_line(stored.path));
        fmt::print("{}", profile_text(stored.profile));
        return 0;
    }
    if (options.verb == "delete") {
        fmt::print("deleted {}\n", store.remove(options.name));
        return 0;
    }
    if (options.verb == "disarm") {  // journaled like any change: `gpupart undo` arms them again
        Controller controller = make_rules_controller();
        const Plan plan = controller.plan_rules(std::nullopt, "profile disarm");
        if (plan.changes_nothing()) {
            if (options.json) return report_plan(plan, controller.state().gpu, true, options.dry_run, std::nullopt);
            fmt::print("no profile rules of yours were armed\n");
            return 0;
        }
        return plan_and_apply(controller, plan, options.json, options.dry_run);
    }
    int gpu_index = 0;
    Controller controller = make_controller(options.snapshot, &gpu_index);
    if (options.verb == "save") {
        const Profile profile = capture_profile(controller.state(), options.name);
        if (options.dry_run) {
            fmt::print("{}", profile_text(profile));
            return 0;
        }
        fmt::print("saved {} rules to {}\n", profile.rules.size(), store.save(profile, options.force));
        return 0;
    }
    const StoredProfile stored = store.load(options.name);
    if (options.verb == "diff") {  // exit 1 on drift, like `nvidia-mig-parted assert`
        const ProfileDrift drift = profile_drift(controller, stored.profile, gpu_index);
        const int code = drift.drifted ? kExitRefused : kExitOk;
        if (options.json) {
            fmt::print("{}\n", json_answer(drift_json(stored, drift)));
            return code;
        }
        const auto lines = profile_diff(controller, stored.profile, gpu_index);
        if (drift.processes.empty()) fmt::print("no partitioned process is running\n");
        for (const auto& line : lines) fmt::print("{}\n", one_line(line));  // quotes command lines
        return code;
    }
    // apply
    const ProfileApplication application = plan_profile(controller, stored.profile, gpu_index);
    const int code = plan_and_apply(controller, application.plan, options.json, options.dry_run);
    if (code != 0) return code;
    if (!options.json) {
        for (const auto& line : application.armed) fmt::print("{}{}\n", options.dry_run ? "would arm: " : "armed: ", one_line(line));
        for (const auto& line : application.not_armed) fmt::print("not armed: {}\n", one_line(line));
    }
    return 0;
}

}  // namespace

Command add_profile_command(CLI::App& app) {
    auto options = std::make_shared<ProfileOptions>();
    CLI::App* profile = app.add_subcommand("profile", "Named sets of partition rules, for running processes and later ones");
    profile->require_subcommand(1);
    struct Verb {
        const char* name;
        const char* help;
        bool takes_name;
        bool changes;
    };
    const Verb verbs[] = {
        {"list", "List your and the system's profiles", false, false},
        {"show", "Print a profile", true, false},
        {"save", "Save the current partitions as a profile (--force replaces one)", true, true},
        {"apply", "Apply a profile to running processes and arm it for processes that start later", true, true},
        {"diff", "Show what applying a profile would change now; exit 1 when anything would (drift)", true, false},
        {"delete", "Delete one of your profiles", true, false},
        {"disarm", "Stop applying your profile rules to processes that start later (`gpupart undo` arms them again)", false, true},
    };
    for (const Verb& verb : verbs) {
        CLI::App* sub = profile->add_subcommand(verb.name, verb.help);
        const std::string name = verb.name;
        sub->callback([options, name] { options->verb = name; });
        if (verb.takes_name) sub->add_option("NAME", options->name, "Profile name (or a path to a .json file)")->required();
        if (verb.changes) sub->add_flag("--dry-run", options->dry_run, "Show what would happen; change nothing");
        if (name == "save") sub->add_flag("--force", options->force, "Replace an existing profile of that name");
        if (name == "list" || name == "show" || name == "apply" || name == "diff" || name == "disarm") sub->add_flag("--json", options->json, "Machine-readable output");
        if (name == "save" || name == "apply" || name == "diff") add_snapshot_options(*sub, options->snapshot);
    }
    return {profile, [options] { return run_profile(*options); }};
}

}  // namespace gpupart::cli
