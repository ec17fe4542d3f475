// gpupart mps start|stop|status: NVIDIA MPS, which partitioned processes need to run side by side.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "platform/mps_control.hpp"

namespace gpupart::cli {

Command add_mps_command(CLI::App& app) {
    auto action = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    CLI::App* mps = app.add_subcommand("mps", "Start, stop or show NVIDIA MPS (needed for partitions to run side by side)");
    mps->require_subcommand(1);
    for (const char* verb : {"start", "stop", "status"}) {
        CLI::App* sub = mps->add_subcommand(verb, std::string("MPS control daemon: ") + verb);
        sub->callback([action, verb] { *action = verb; });
        if (std::string(verb) == "status") sub->add_flag("--json", *json, "Machine-readable output");
    }
    return {mps, [action, json] {
                if (*action == "start") fmt::print("{}\n", mps_start());
                if (*action == "stop") fmt::print("{}\n", mps_stop());
                if (*action == "status") {
                    const MpsState state = mps_status();
                    if (*json)
                        fmt::print("{}\n", nlohmann::ordered_json{{"running", state.control_running},
                                                                  {"pipe_directory", state.pipe_directory},
                                                                  {"server_pids", state.server_pids},
                                                                  {"detail", state.detail}}
                                               .dump(2, ' ', false, kJsonUtf8Errors));
                    else
                        fmt::print("MPS {}\n", state.detail);
                    // For scripts, as `systemctl is-active`: the answer is in the exit status too.
                    if (!state.control_running) return kExitRefused;
                }
                return kExitOk;
            }};
}

}  // namespace gpupart::cli
