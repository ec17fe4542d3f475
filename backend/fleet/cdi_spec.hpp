#pragma once
// The Container Device Interface (CDI) spec the Kubernetes driver writes for one prepared claim
// (docs/kubernetes.md): the container runtime (containerd, CRI-O) applies its edits to every container of
// the pods that use the claim. It starts their processes under the shim exactly as `gpupart run` does
// (LD_PRELOAD, GPUPART_TPCS, GPUPART_REAL_TPCS), with the claim's job, the claim's own registry directory
// as /run/gpupart, the GPU's device nodes and, when the GPU has one, its MPS daemon's pipe directory.
// Field names follow the CDI specification (cdiVersion 0.6.0) as gpupart's authors know it, not its Go
// library: cdi_spec_problems() checks what that spec requires, and must be compared with the spec's own
// validation (container-device-interface, pkg/cdi) before a cluster relies on it.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/tpc_mask.hpp"

namespace gpupart {

inline constexpr std::string_view kCdiVersion = "0.6.0";
inline constexpr std::string_view kCdiKind = "gpupart.io/tpc";  // vendor gpupart.io, class tpc
// Where a container finds what the spec mounts (a path of gpupart's own, so it hides nothing of the image).
inline constexpr std::string_view kContainerShim = "/opt/gpupart/libgpupart-shim.so";
inline constexpr std::string_view kContainerRegistry = "/run/gpupart";

struct CdiClaimEdits {
    std::string claim_uid;       // checked: it becomes the CDI device name
    std::string job;             // GPUPART_JOB (fleet/claim.hpp, claim_job)
    std::string gpu_key;         // the GPU's UUID, as GPUPART_TPCS names it
    TpcMask tpcs;                // the claim's TPCs as descriptor bits (the shim's GPUPART_TPCS)
    TpcMask real_tpcs;           // the GPU's real TPCs as descriptor bits
    std::string shim;            // host path of libgpupart-shim.so
    std::string claim_registry;  // host directory mounted as /run/gpupart (fleet/owned_directory.hpp)
    std::string device_node;     // the GPU's /dev/nvidiaN
    std::string mps_pipe;        // host pipe directory of the GPU's MPS daemon, mounted at the same path; "" = none
    std::string mps_shm;         // host directory the MPS daemon uses as /dev/shm, mounted there; "" = none
};

// The whole spec: one device, named by the claim's uid. Throws UserError when an input cannot go into a
// spec (a relative path, a uid that is no CDI device name, no TPC).
nlohmann::ordered_json cdi_spec(const CdiClaimEdits& edits);

// "gpupart.io/tpc=<uid>": what NodePrepareResources returns for the claim's device.
std::string cdi_device_id(std::string_view claim_uid);
// "gpupart.io-tpc_<uid>.json": the spec's file in a CDI directory (/var/run/cdi for specs that live as long as a claim).
std::string cdi_spec_file_name(std::string_view claim_uid);

// What in `spec` the CDI specification does not allow, one line each (empty: none found). Checks the
// required fields, their types and syntax (version, kind, device names, env entries, absolute paths,
// hook names, device node types) and refuses fields it does not know.
std::vector<std::string> cdi_spec_problems(const nlohmann::json& spec);

}  // namespace gpupart
