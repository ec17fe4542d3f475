#include "fleet/resource_slice.hpp"

#include <fmt/format.h>

#include "fleet/claim.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

using Json = nlohmann::ordered_json;

// resource.k8s.io's DeviceAttribute: exactly one of int, bool, string, version.
Json string_attribute(const std::string& value) { return Json{{"string", value}}; }
Json int_attribute(long value) { return Json{{"int", value}}; }

Json device_of(const Gpu& gpu) {
    if (!mask_bits_known(gpu))
        throw UserError(fmt::format("GPU {}'s TPC mask bits are not known ({}): its TPCs cannot be offered",
                                    gpu.index, mask_bits_unknown_reason(gpu)));
    const int tpcs = real_tpcs(gpu).count();
    int gpcs = 0;
    for (const Gpc& gpc : gpu.gpcs)
        if (!gpc_tpcs(gpu, gpc.index).empty()) ++gpcs;
    Json attributes{{"uuid", string_attribute(gpu_key(gpu))},
                    {"index", int_attribute(gpu.index)},
                    {"productName", string_attribute(gpu_display_name(gpu))},
                    {"gpcs", int_attribute(gpcs)},
                    {"sms", int_attribute(static_cast<long>(sm_total(gpu)))}};
    if (gpu.architecture.value) attributes["architecture"] = string_attribute(*gpu.architecture.value);
    if (gpu.pci_bus_id.value) attributes["pciBusID"] = string_attribute(*gpu.pci_bus_id.value);
    if (gpu.driver_version.value) attributes["driverVersion"] = string_attribute(*gpu.driver_version.value);
    // Quantities are strings in the API. validRange with step 1: every count from 1 to all TPCs is valid.
    const std::string all = std::to_string(tpcs);
    Json capacity{{"tpcs", Json{{"value", all},
                                {"requestPolicy", Json{{"default", all},
                                                       {"validRange", Json{{"min", "1"}, {"max", all}, {"step", "1"}}}}}}}};
    return Json{{"name", slice_device_name(gpu)},
                {"allowMultipleAllocations", true},
                {"attributes", std::move(attributes)},
                {"capacity", std::move(capacity)}};
}

}  // namespace

std::string slice_device_name(const Gpu& gpu) { return fmt::format("gpu-{}", gpu.index); }

nlohmann::ordered_json resource_slice(const std::vector<Gpu>& gpus, const SliceOptions& options) {
    try {
        check_claim_name(options.node);  // a node's name is a subdomain, as a claim's is
    } catch (const UserError&) {
        throw UserError(fmt::format("node '{}': not a Kubernetes node name (an RFC 1123 subdomain)", one_line(options.node, 80)));
    }
    if (options.node.empty()) throw UserError("the node's name is empty: name it (--node)");
    if (options.generation < 1) throw UserError("a pool generation starts at 1");
    Json devices = Json::array();
    for (const Gpu& gpu : gpus) devices.push_back(device_of(gpu));
    return Json{{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceSlice"},
                {"metadata", Json{{"name", fmt::format("{}-{}", options.node, kDriverName)}}},
                {"spec", Json{{"driver", kDriverName},
                              {"nodeName", options.node},
                              {"pool", Json{{"name", options.node}, {"generation", options.generation}, {"resourceSliceCount", 1}}},
                              {"devices", std::move(devices)}}}};
}

}  // namespace gpupart
