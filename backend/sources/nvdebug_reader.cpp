#include "sources/nvdebug_reader.hpp"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

namespace fs = std::filesystem;

// nvdebug's files are a few lines each (the largest, a register dump, some kilobytes).
constexpr std::size_t kMaxNvdebugFileBytes = 1u << 20;

// 0xbadf.... is what a register read returns when the unit is powered down (nvdebug: "Returns 0xbadf1201
// if GPU not active").
bool bad_read(std::uint32_t value) { return (value & 0xffff0000u) == 0xbadf0000u; }

class Directory {
public:
    explicit Directory(fs::path path) : path_(std::move(path)) {}

    // The file's text, or nullopt with `why` set ("no file X", "X: is a FIFO, not a regular file; ...").
    // --nvdebug-root is typed by the user: a FIFO or device there must not hang or flood the reader.
    std::optional<std::string> read(const std::string& name, std::string& why) const {
        const fs::path file = path_ / name;
        try {
            auto text = read_regular_file_if_exists(file.string(), kMaxNvdebugFileBytes, Links::follow, "nvdebug file");
            if (!text) why = fmt::format("no file {}", file.string());
            return text;
        } catch (const UserError& error) {
            why = error.what();
            return std::nullopt;
        }
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

Provenance from(const Directory& dir, const std::string& name) { return Provenance{Source::nvdebug, (dir.path() / name).string()}; }

// A file parsed into a fact: a parse error is also remembered in `problems` (text nvdebug never prints).
template <typename T, typename Parse>
Fact<T> read_fact(const Directory& dir, const std::string& name, Parse&& parse, std::vector<std::string>& problems) {
    std::string why;
    const std::optional<std::string> text = dir.read(name, why);
    if (!text) return unknown_fact<T>(why, from(dir, name));
    try {
        return known_fact<T>(parse(*text), from(dir, name));
    } catch (const UserError& error) {
        problems.push_back(fmt::format("{}: {}", (dir.path() / name).string(), error.what()));
        return unknown_fact<T>(problems.back(), from(dir, name));
    }
}

void decode_cwd(const Directory& dir, NvdebugFacts& facts, std::vector<std::string>& problems) {
    int tpc_count = 0;
    for (const auto& [gpc, tpcs] : facts.enabled_tpcs) {
        if (!tpcs.known()) {
            facts.cwd_unknown = fmt::format("the TPC count is unknown ({}), so CWD entries cannot be delimited", tpcs.unknown_reason);
            return;
        }
        tpc_count += std::popcount(*tpcs.value);
    }
    if (tpc_count == 0) {
        facts.cwd_unknown = "no gpcK_tpc_mask files: the TPC count is unknown";
        return;
    }
    for (int tpc = 0; tpc < tpc_count; ++tpc) {
        const int k = tpc / 4;
        const int byte = tpc % 4;
        std::string why;
        const auto gpc_tpc = dir.read(fmt::format("CWD_GPC_TPC_ID{}", k), why);
        if (!gpc_tpc) {
            facts.cwd_tpcs.clear();
            facts.cwd_unknown = why;
            return;
        }
        std::uint32_t value = 0;
        try {
            value = parse_nvdebug_register(*gpc_tpc);
        } catch (const UserError& error) {
            problems.push_back(fmt::format("CWD_GPC_TPC_ID{}: {}", k, error.what()));
            facts.cwd_tpcs.clear();
            facts.cwd_unknown = problems.back();
            return;
        }
        if (bad_read(value)) {
            facts.cwd_tpcs.clear();
            facts.cwd_unknown = fmt::format("CWD_GPC_TPC_ID{} reads {:#x}: the registers hold the SM order only while a "
                                            "CUDA context is active",
                                            k, value);
            return;
        }
        const std::uint32_t entry = (value >> (8 * byte)) & 0xffu;
        NvdebugCwdTpc cwd{tpc, static_cast<int>(entry >> 4), static_cast<int>(entry & 0xfu), std::nullopt};
        if (const auto sm = dir.read(fmt::format("CWD_SM_ID{}", k), why)) {
            try {
                const std::uint32_t sm_value = parse_nvdebug_register(*sm);
                if (!bad_read(sm_value)) cwd.first_sm = static_cast<int>((sm_value >> (8 * byte)) & 0xffu);
            } catch (const UserError& error) {
                problems.push_back(fmt::format("CWD_SM_ID{}: {}", k, error.what()));
            }
        }
        facts.cwd_tpcs.push_back(cwd);
    }
}

}  // namespace

NvdebugFacts read_nvdebug(const std::string& root, int gpu_index) {
    NvdebugFacts facts;
    const Directory dir(fs::path(root) / fmt::format("gpu{}", gpu_index));
    facts.directory = dir.path().string();
    std::error_code error;
    if (!fs::is_directory(dir.path(), error)) {
        facts.status = SourceStatus{Source::nvdebug, SourceState::absent,
                                    fmt::format("no {}: the nvdebug module is not loaded", dir.path().string())};
        return facts;
    }
    std::vector<std::string> problems;
    auto value5 = [](const std::string& text) { return static_cast<int>(parse_nvdebug_register(text) & 0x1fu); };
    facts.gpc_slots = read_fact<int>(dir, "num_gpcs", value5, problems);
    facts.tpc_slots_per_gpc = read_fact<int>(dir, "num_tpc_per_gpc", value5, problems);
    facts.copy_engine_count = read_fact<int>(dir, "num_ces", value5, problems);
    const int gpc_slots = facts.gpc_slots.value.value_or(0);
    const int tpc_slots = facts.tpc_slots_per_gpc.value.value_or(0);
    facts.enabled_gpcs = read_fact<std::uint32_t>(
        dir, "gpc_mask", [&](const std::string& text) { return enabled_slots(parse_nvdebug_register(text), gpc_slots); }, problems);
    for (int gpc = 0; gpc < gpc_slots; ++gpc) {
        const std::string name = fmt::format("gpc{}_tpc_mask", gpc);
        if (!fs::exists(dir.path() / name)) continue;  // nvdebug creates it only for enabled GPCs
        facts.enabled_tpcs[gpc] = read_fact<std::uint32_t>(
            dir, name, [&](const std::string& text) { return enabled_slots(parse_nvdebug_register(text), tpc_slots); }, problems);
    }
    decode_cwd(dir, facts, problems);
    facts.engines = read_fact<std::vector<NvdebugEngine>>(dir, "device_info", parse_nvdebug_device_info, problems);
    facts.copy_links = read_fact<std::vector<NvdebugCopyLink>>(dir, "copy_topology", parse_nvdebug_copy_topology, problems);
    facts.pce_map = read_fact<std::uint32_t>(dir, "pce_map", parse_nvdebug_register, problems);

    static const std::regex runlist_dir(R"(runlist(\d+))");
    for (const auto& entry : fs::directory_iterator(dir.path(), error)) {
        std::smatch m;
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || !std::regex_match(name, m, runlist_dir)) continue;
        NvdebugRunlistFile file;
        file.index = std::stoi(m[1]);
        file.runlist = read_fact<NvdebugRunlist>(dir, name + "/runlist", parse_nvdebug_runlist, problems);
        if (!file.runlist.known() && file.runlist.unknown_reason.find("read failed") != std::string::npos)
            file.runlist.unknown_reason += " (nvdebug cannot print runlists that GSP firmware manages)";
        facts.runlists.push_back(std::move(file));
    }
    std::sort(facts.runlists.begin(), facts.runlists.end(), [](const auto& a, const auto& b) { return a.index < b.index; });

    facts.status = problems.empty()
                       ? SourceStatus{Source::nvdebug, SourceState::ok, fmt::format("read {}", dir.path().string())}
                       : SourceStatus{Source::nvdebug, SourceState::failed,
                                      fmt::format("{} ({} problem(s))", problems.front(), problems.size())};
    return facts;
}

std::vector<SmOrderEntry> nvdebug_sm_order(const NvdebugFacts& facts, int sms_per_tpc) {
    std::vector<SmOrderEntry> order;
    for (const NvdebugCwdTpc& tpc : facts.cwd_tpcs) {
        if (!tpc.first_sm) return {};
        for (int i = 0; i < sms_per_tpc; ++i)
            order.push_back(SmOrderEntry{*tpc.first_sm + i, tpc.gpc, tpc.local_tpc, tpc.global_tpc, -1});
    }
    std::sort(order.begin(), order.end(), [](const SmOrderEntry& a, const SmOrderEntry& b) { return a.sm < b.sm; });
    return order;
}

}  // namespace gpupart
