#pragma once
// gpupart k8s prepare / unprepare: what the Kubernetes driver's NodePrepareResources and NodeUnprepareResources
// do for one claim (docs/kubernetes.md), run by hand so an operator sees exactly that, and callable by the
// driver itself. Claims and CDI specs come from backend/fleet; this file finds the node's paths (shim, device
// node, MPS daemon) and prints.
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "registry/slot_numbering.hpp"

namespace gpupart::cli {

struct K8sPaths {
    std::string state_dir = "/var/lib/gpupart/k8s";     // claims files (fleet/claim_store.hpp)
    std::string registry_root = "/run/gpupart-k8s";     // one registry directory per claim
    std::optional<std::string> cdi_dir;                 // where specs are written (/var/run/cdi); none: printed
};

struct K8sPrepareOptions {
    SnapshotOptions snapshot;
    K8sPaths paths;
    std::string claim;
    std::string namespace_name = "default";
    std::string name;
    std::optional<int> tpcs;
    std::optional<int> gpcs;
    std::string mps_root = "/run/gpupart-mps";  // per-GPU MPS pipe directories (platform/mps_units.hpp)
    std::string mps_shm_root;                   // per-GPU /dev/shm of the MPS daemon; "" = not mounted
    bool no_mps = false;
    std::string device_node;                    // "" = found from the driver (or assumed for a recording)
    bool json = false;
};

int run_k8s_prepare(const K8sPrepareOptions& options);
// The maps of this machine's GPUs (machine_gpus_for_numbers), for reading claims files written in descriptor bits
// (fleet/claim_store.hpp, version 1); the map of `key` or nullptr.
TpcNumberings claim_file_maps();
const TpcNumbering* claim_file_map(const TpcNumberings& maps, const std::string& key);
int run_k8s_unprepare(const std::string& claim, const K8sPaths& paths, bool json);

}  // namespace gpupart::cli
