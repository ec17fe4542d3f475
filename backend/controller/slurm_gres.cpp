#include "controller/slurm_gres.hpp"

#include <charconv>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

// The entries of a GRES detail: split at commas outside parentheses ("(IDX:0,2)" holds commas).
std::vector<std::string_view> entries_of(std::string_view detail) {
    std::vector<std::string_view> entries;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= detail.size(); ++i) {
        const char c = i < detail.size() ? detail[i] : ',';
        if (c == '(') ++depth;
        if (c == ')' && depth > 0) --depth;
        if (c == ',' && depth == 0) {
            if (i > start) entries.push_back(detail.substr(start, i - start));
            start = i + 1;
        }
    }
    return entries;
}

std::optional<int> number(std::string_view text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
    return value;
}

}  // namespace

std::vector<TpcGres> parse_tpc_gres(std::string_view detail) {
    std::vector<TpcGres> found;
    for (std::string_view entry : entries_of(detail)) {
        // "name[:type][:count][(CNT:n)|(IDX:...)]"
        const auto paren = entry.find('(');
        std::string_view head = entry.substr(0, paren);
        const std::string_view tail = paren == std::string_view::npos ? std::string_view() : entry.substr(paren);
        const auto colon = head.find(':');
        if (head.substr(0, colon) != "tpc") continue;
        std::string_view rest = colon == std::string_view::npos ? std::string_view() : head.substr(colon + 1);
        std::optional<int> count;
        if (tail.starts_with("(CNT:") && tail.ends_with(")")) count = number(tail.substr(5, tail.size() - 6));
        // "tpc:gpu0:16" or "tpc:16": a trailing number is the count when no (CNT:n) says it.
        if (const auto last = rest.rfind(':'); !count) {
            if (auto n = number(rest.substr(last == std::string_view::npos ? 0 : last + 1))) {
                count = n;
                rest = last == std::string_view::npos ? std::string_view() : rest.substr(0, last);
            }
        }
        if (!count)
            throw UserError(fmt::format("cannot read the TPC count of GRES '{}' (expected tpc:<type>(CNT:<n>))", one_line(entry, 80)));
        if (*count == 0) continue;
        const std::string type(rest);
        bool added = false;
        for (TpcGres& known : found)
            if (known.type == type) {
                known.count += *count;
                added = true;
            }
        if (!added) found.push_back({type, *count});
    }
    return found;
}

std::optional<int> gpu_index_of_tpc_type(std::string_view type) {
    if (!type.starts_with("gpu")) return std::nullopt;
    return number(type.substr(3));
}

std::string slurm_conf_text(const std::vector<Gpu>& gpus, const std::string& node, const std::string& plugin) {
    std::string gres_conf;
    std::vector<std::string> node_gres, typed_tres;
    for (const Gpu& gpu : gpus) {
        // A count from unknown mask bits would be 0, and Slurm would quietly offer nothing on that GPU.
        if (!mask_bits_known(gpu))
            throw UserError(fmt::format(
                "GPU {}'s TPC mask bits are not known ({}), so its tpc Count cannot be written: run `gpupart probe "
                "--gpu {}` on this node first (gpupart-probe.service probes every GPU at boot)",
                gpu.index, mask_bits_unknown_reason(gpu), gpu.index));
        const int tpcs = real_tpcs(gpu).count();
        gres_conf += fmt::format("NodeName={} Name=tpc Type=gpu{} Count={} Flags=CountOnly  # {} {}\n", node, gpu.index, tpcs,
                                 gpu_display_name(gpu), gpu_key(gpu));
        node_gres.push_back(fmt::format("tpc:gpu{}:{}", gpu.index, tpcs));
        typed_tres.push_back(fmt::format("gres/tpc:gpu{}", gpu.index));
    }
    return fmt::format(
        "# gres.conf on node {0}: one tpc type per GPU (gpupart's GPU index), Count = its real TPCs\n"
        "{1}"
        "\n"
        "# slurm.conf: add tpc to GresTypes (e.g. GresTypes=gpu,tpc) and the tpc counts to the node's Gres=\n"
        "GresTypes=tpc\n"
        "SelectType=select/cons_tres\n"
        "NodeName={0} Gres={2}  # plus the node's CPUs, RealMemory, ... as before\n"
        "# with slurmdbd, TPCs in sacct (also per GPU): AccountingStorageTRES=gres/tpc,{4}\n"
        "\n"
        "# /etc/slurm/plugstack.conf.d/gpupart.conf (on every node and login node)\n"
        "required {3}\n",
        node, gres_conf, fmt::join(node_gres, ","), plugin, fmt::join(typed_tres, ","));
}

}  // namespace gpupart
