#include "fleet/cdi_spec.hpp"

#include <fmt/format.h>

#include "fleet/claim.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

using Json = nlohmann::ordered_json;

void require_absolute(const std::string& path, std::string_view what) {
    if (path.empty() || path.front() != '/' || path.find('\n') != std::string::npos)
        throw UserError(fmt::format("{} '{}': a CDI spec needs an absolute path", what, one_line(path, 200)));
}

Json bind_mount(const std::string& host, const std::string& container, bool writable, bool executable) {
    Json options = Json::array({writable ? "rw" : "ro", "nosuid", "nodev"});
    if (!executable) options.push_back("noexec");
    options.push_back("bind");
    return Json{{"hostPath", host}, {"containerPath", container}, {"type", "bind"}, {"options", std::move(options)}};
}

}  // namespace

std::string cdi_device_id(std::string_view claim_uid) { return fmt::format("{}={}", kCdiKind, claim_uid); }

std::string cdi_spec_file_name(std::string_view claim_uid) { return fmt::format("gpupart.io-tpc_{}.json", claim_uid); }

nlohmann::ordered_json cdi_spec(const CdiClaimEdits& edits) {
    check_claim_uid(edits.claim_uid);
    if ((edits.tpcs & edits.real_tpcs).empty())
        throw UserError(fmt::format("claim {}: no real TPC to give its containers", edits.claim_uid));
    require_absolute(edits.shim, "shim");
    require_absolute(edits.claim_registry, "claim registry");
    require_absolute(edits.device_node, "device node");
    if (!edits.mps_pipe.empty()) require_absolute(edits.mps_pipe, "MPS pipe directory");
    if (!edits.mps_shm.empty()) require_absolute(edits.mps_shm, "MPS shared memory directory");

    // As `gpupart run` sets them (app/cli/command_run.cpp); the registry root is the claim's own.
    Json env = Json::array({fmt::format("LD_PRELOAD={}", kContainerShim),
                            fmt::format("GPUPART_TPCS={}={}", edits.gpu_key, edits.tpcs.to_hex()),
                            fmt::format("GPUPART_REAL_TPCS={}={}", edits.gpu_key, edits.real_tpcs.to_hex()),
                            fmt::format("GPUPART_JOB={}", edits.job),
                            fmt::format("GPUPART_REGISTRY_DIR={}", kContainerRegistry)});
    // The control node and UVM as well as the GPU's own node: CUDA opens all of them.
    Json nodes = Json::array();
    for (const std::string& node : {std::string("/dev/nvidiactl"), std::string("/dev/nvidia-uvm"),
                                    std::string("/dev/nvidia-uvm-tools"), edits.device_node})
        nodes.push_back(Json{{"path", node}});
    Json mounts = Json::array({bind_mount(edits.shim, std::string(kContainerShim), false, true),
                               bind_mount(edits.claim_registry, std::string(kContainerRegistry), true, false)});
    if (!edits.mps_pipe.empty()) {
        // Read-only: a container (root in it may override file modes) must not replace the daemon's sockets.
        mounts.push_back(bind_mount(edits.mps_pipe, edits.mps_pipe, false, false));
        env.push_back(fmt::format("CUDA_MPS_PIPE_DIRECTORY={}", edits.mps_pipe));
        // An MPS client gets 2 channels otherwise (Bakita & Anderson, ECRTS 2025, pitfall 4), as `gpupart run` sets it.
        env.push_back("CUDA_DEVICE_MAX_CONNECTIONS=8");
    }
    if (!edits.mps_shm.empty()) mounts.push_back(bind_mount(edits.mps_shm, "/dev/shm", true, false));

    Json device{{"name", edits.claim_uid},
                {"containerEdits", Json{{"env", std::move(env)}, {"deviceNodes", std::move(nodes)},
                                        {"mounts", std::move(mounts)}}}};
    return Json{{"cdiVersion", kCdiVersion},
                {"kind", kCdiKind},
                {"annotations", Json{{"gpupart.io/claim", edits.claim_uid},
                                     {"gpupart.io/job", edits.job},
                                     {"gpupart.io/gpu", edits.gpu_key},
                                     {"gpupart.io/tpcs", edits.tpcs.to_list()}}},
                {"devices", Json::array({std::move(device)})}};
}

}  // namespace gpupart
