#include "report/mask_report.hpp"

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"

namespace gpupart {
namespace {

std::vector<std::string> gpc_names(const std::vector<int>& gpcs) {
    std::vector<std::string> names;
    for (int gpc : gpcs) names.push_back(gpc_name(gpc));
    return names;
}

// The launch-descriptor bits of the mask, for experts: "" where the GPU's map is not known.
std::string descriptor_bits_text(const ResolvedMask& resolved, const Gpu& gpu) {
    const auto numbering = TpcNumbering::try_of(gpu);
    return numbering ? "bits:" + numbering->to_bits(resolved.mask).to_hex() : std::string();
}

}  // namespace

std::string mask_report_text(const std::string& expression, const ResolvedMask& resolved, const Gpu& gpu) {
    const auto sms = sms_of(gpu, resolved.mask);
    const auto whole = gpcs_fully_covered(gpu, resolved.mask);
    std::string out;
    out += fmt::format("mask  {}\n", expression);
    out += fmt::format("tpcs  {}\n", resolved.mask.to_list());
    out += fmt::format("hex   {}\n", resolved.mask.to_hex());
    const std::string bits = descriptor_bits_text(resolved, gpu);
    out += fmt::format("bits  {}\n", bits.empty() ? "launch-descriptor bits not known (run `gpupart probe`)" : bits + " (launch descriptor)");
    out += fmt::format("size  {} of {} TPCs, {} of {} SMs\n", resolved.mask.count(), gpu.tpcs.size(), sms.size(), sm_total(gpu));
    out += fmt::format("gpcs  {}\n", whole.empty() ? std::string("no GPC whole") : fmt::format("whole: {}", fmt::join(gpc_names(whole), ", ")));
    for (const auto& note : resolved.notes) out += "note  " + note + "\n";
    for (const auto& note : resolved.topology_notes) out += "note  " + note + "\n";
    return out;
}

nlohmann::ordered_json mask_report_json(const std::string& expression, const ResolvedMask& resolved, const Gpu& gpu) {
    const std::string bits = descriptor_bits_text(resolved, gpu);
    return nlohmann::ordered_json{
        {"expression", expression},
        {"gpu", gpu.index},
        {"tpcs", resolved.mask.to_list()},
        {"mask", resolved.mask.to_hex_padded()},
        {"tpc_numbers", resolved.mask.bits()},
        {"descriptor_bits", bits.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bits)},
        {"tpc_count", resolved.mask.count()},
        {"sms", sms_of(gpu, resolved.mask)},
        {"sm_count", sms_of(gpu, resolved.mask).size()},
        {"whole_gpcs", gpc_names(gpcs_fully_covered(gpu, resolved.mask))},
        {"dropped_descriptor_bits", resolved.dropped_holes.to_list()},
        {"notes", resolved.notes},
        {"topology_notes", resolved.topology_notes},
    };
}

}  // namespace gpupart
