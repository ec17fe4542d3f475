// gpupart mps start|stop|status: NVIDIA MPS, which partitioned processes need to run side by side.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "model/user_error.hpp"
#include "platform/mps_control.hpp"
#include "platform/mps_units.hpp"

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
                    // Each GPU's own daemon (gpupart-mps@<uuid>.service) besides the default one.
                    const std::vector<MpsUnitStatus> units = mps_unit_status();
                    if (*json) {
                        nlohmann::ordered_json per_gpu = nlohmann::ordered_json::array();
                        for (const MpsUnitStatus& unit : units)
                            per_gpu.push_back({{"gpu_uuid", unit.uuid},
                                               {"unit", unit.unit},
                                               {"running", unit.state.control_running},
                                               {"pipe_directory", unit.state.pipe_directory},
                                               {"server_pids", unit.state.server_pids},
                                               {"detail", unit.state.detail}});
                        fmt::print("{}\n", json_answer(nlohmann::ordered_json{{"running", state.control_running},
                                                                  {"pipe_directory", state.pipe_directory},
                                                                  {"server_pids", state.server_pids},
                                                                  {"detail", state.detail},
                                                                  {"units", per_gpu}}));
                    } else {
                        fmt::print("MPS {}\n", state.detail);
                        for (const MpsUnitStatus& unit : units)
                            fmt::print("MPS of {} ({}): {}\n", one_line(unit.uuid), one_line(unit.unit), unit.state.detail);
                    }
                    // For scripts, as `systemctl is-active`: the answer is in the exit status too. Running
                    // means the default daemon or any GPU's own one.
                    bool running = state.control_running;
                    for (const MpsUnitStatus& unit : units) running = running || unit.state.control_running;
                    if (!running) return kExitRefused;
                }
                return kExitOk;
            }};
}

}  // namespace gpupart::cli
