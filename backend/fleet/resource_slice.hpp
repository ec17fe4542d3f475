#pragma once
// The ResourceSlice the Kubernetes driver publishes for a node (resource.k8s.io/v1, docs/kubernetes.md): one
// device per GPU, "gpu-<index>", that many claims may share (allowMultipleAllocations, KEP-5075 consumable
// capacity), with the capacity "tpcs" = the GPU's real TPCs, requested 1 TPC at a time; a request that names no
// amount gets the whole GPU. Field names are those of the API as gpupart's authors know it (Kubernetes 1.34
// to 1.36): compare them with the API's own types before a cluster relies on them (docs/kubernetes.md).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/gpu.hpp"

namespace gpupart {

inline constexpr std::string_view kDriverName = "gpupart.io";

struct SliceOptions {
    std::string node;     // spec.nodeName and the pool's name: an RFC 1123 subdomain (checked)
    long generation = 1;  // spec.pool.generation: the driver raises it when it replaces its slices
};

// "gpu-<index>": the device name a claim's allocation result names.
std::string slice_device_name(const Gpu& gpu);
// Throws UserError for a node name that is not a subdomain or a GPU whose TPC mask bits are not known.
nlohmann::ordered_json resource_slice(const std::vector<Gpu>& gpus, const SliceOptions& options);

}  // namespace gpupart
