// gpupart slurm conf|jobs|place|release: TPCs as a Slurm generic resource (docs/slurm.md). `conf` prints
// the configuration for this machine's GPUs, `jobs` shows what each job holds; `place` and `release` are
// what the SPANK plugin runs in slurmstepd (as root) before a step's tasks start and after they end.
#include <memory>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "controller/job_placement.hpp"
#include "controller/job_rules.hpp"
#include "controller/slurm_gres.hpp"
#include "model/user_error.hpp"
#include "platform/install_paths.hpp"
#include "platform/process_identity.hpp"
#include "platform/user_names.hpp"
#include "registry/registry.hpp"
#include "slurm_place.hpp"

namespace gpupart::cli {
namespace {

std::string short_host_name() {
    char name[256] = "";
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
    std::string host(name);
    return host.substr(0, host.find('.'));
}

int print_jobs(bool json) {
    const Registry registry(Registry::default_directory(), machine_gpus_for_numbers());
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    bool any = false;
    const auto row = [](std::string_view gpu, std::string_view job, std::string_view user, std::string_view count,
                        std::string_view tpcs, std::string_view steps) {
        fmt::print("{:<40} {:<18} {:<10} {:>4}  {:<24} {}\n", gpu, job, user, count, tpcs, steps);
    };
    for (const std::string& uuid : job_reservation_gpus(registry.directory())) {
        nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
        for (const JobReservation& job : read_job_reservations(registry.directory(), uuid, registry.numberings())) {
            nlohmann::ordered_json steps = nlohmann::ordered_json::array();
            std::vector<std::string> step_words;
            for (const JobHolder& holder : job.holders) {
                const bool alive = process_liveness(holder.pid, holder.start_time) == Liveness::alive;
                steps.push_back({{"step", holder.step}, {"slurmstepd_pid", holder.pid}, {"alive", alive}});
                step_words.push_back(fmt::format("{}{}", one_line(holder.step, 40), alive ? "" : " (gone)"));
            }
            jobs.push_back({{"job", job.job}, {"uid", job.uid}, {"user", user_name(job.uid)}, {"tpc_count", job.tpcs.count()},
                            {"tpcs", job.tpcs.to_list()}, {"mask", job.tpcs.to_hex_padded()},
                            {"since_realtime_ns", job.since_ns}, {"steps", std::move(steps)}});
            if (!json) {
                if (!any) row("GPU", "JOB", "USER", "TPCS", "LIST", "STEPS (gone: its slurmstepd ended)");
                row(one_line(uuid, 40), one_line(job.job, 18), one_line(user_name(job.uid), 10), std::to_string(job.tpcs.count()),
                    job.tpcs.to_list(),
                    step_words.empty() ? "(no step: its processes still run)" : fmt::format("{}", fmt::join(step_words, " ")));
            }
            any = true;
        }
        gpus.push_back({{"gpu_uuid", uuid}, {"jobs", std::move(jobs)}});
    }
    if (json) {
        fmt::print("{}\n", json_answer(nlohmann::ordered_json{{"registry", registry.directory()}, {"gpus", std::move(gpus)}}));
    } else if (!any) {
        fmt::print("no job holds TPCs (registry {})\n", one_line(registry.directory()));
    }
    return kExitOk;
}

}  // namespace

Command add_slurm_command(CLI::App& app) {
    struct SlurmOptions {
        std::string action;
        SnapshotOptions snapshot;
        std::string node;
        // Where this gpupart's package put the plugin, from where this gpupart is: the .deb's /usr, whatever
        // prefix the build was configured with.
        std::string plugin = find_slurm_plugin(running_executable()).string();
        bool json = false;
        SlurmPlaceRequest place;
        bool no_mps = false;
        int holder = 0;
        int wait_s = 10;
    };
    auto options = std::make_shared<SlurmOptions>();
    CLI::App* slurm = app.add_subcommand("slurm", "TPCs as a Slurm generic resource: configuration, jobs, the SPANK plugin's helper");
    slurm->require_subcommand(1);

    CLI::App* conf = slurm->add_subcommand("conf", "Print the gres.conf, slurm.conf and plugstack lines for this machine's GPUs");
    conf->callback([options] { options->action = "conf"; });
    add_snapshot_options(*conf, options->snapshot);
    conf->add_option("--node", options->node, "Slurm's name for this node (default: the short host name)");
    conf->add_option("--plugin", options->plugin, "Path of gpupart_spank.so in the plugstack line")->capture_default_str();

    CLI::App* jobs = slurm->add_subcommand("jobs", "Show the TPCs each Slurm job holds on each GPU, and its steps");
    jobs->callback([options] { options->action = "jobs"; });
    jobs->add_flag("--json", options->json, "Machine-readable output");

    CLI::App* place = slurm->add_subcommand("place", "(the SPANK plugin's) Place a job step's TPCs; print the tasks' environment");
    place->callback([options] { options->action = "place"; });
    add_snapshot_options(*place, options->place.snapshot);
    place->add_option("--step", options->place.step, "The step: slurm:<job>.<step>")->required();
    place->add_option("--uid", options->place.uid, "The job's user id")->required();
    place->add_option("--holder", options->place.holder_pid, "The step's slurmstepd (its pid)")->required();
    place->add_option("--gres", options->place.gres, "This node's GRES detail of the job: tpc:gpu0(CNT:16),...")->required();
    place->add_flag("--no-mps", options->no_mps, "Neither join nor start MPS");

    CLI::App* release = slurm->add_subcommand("release", "(the SPANK plugin's) Give back a step's TPCs; sweep those of ended jobs");
    release->callback([options] { options->action = "release"; });
    release->add_option("--holder", options->holder, "The step's slurmstepd (its pid); 0: only sweep")->required();
    release->add_option("--wait", options->wait_s, "Seconds to let the step's processes exit first")->capture_default_str();

    return {slurm, [options] {
                if (options->action == "conf") {
                    const ChosenSnapshot chosen = load_chosen(options->snapshot);
                    fmt::print("# topology: {} ({})\n", chosen.origin, one_line(chosen.why));
                    fmt::print("{}", slurm_conf_text(chosen.snapshot.gpus, options->node.empty() ? short_host_name() : options->node,
                                                     options->plugin));
                    return kExitOk;
                }
                if (options->action == "jobs") return print_jobs(options->json);
                if (options->action == "place") {
                    SlurmPlaceRequest request = options->place;
                    request.mps = !options->no_mps;
                    return run_slurm_place(request);
                }
                const Registry registry(Registry::default_directory(), machine_gpus_for_numbers());
                JobHolder holder;
                if (options->holder != 0) {
                    const auto start = process_start_time(options->holder);
                    // A slurmstepd that is gone cannot be told apart: what it held goes with the sweep.
                    holder = JobHolder{options->holder, start.value_or(0), ""};
                }
                for (const std::string& line : release_job_step(registry, holder, options->wait_s * 1000)) fmt::print("{}\n", line);
                return kExitOk;
            }};
}

}  // namespace gpupart::cli
