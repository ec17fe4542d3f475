#pragma once
// What must hold for ANY bytes a local user can write into a registry file: a slot file, a
// profile rules table, an SMLP component file or a GPC map. Shared by the libFuzzer target
// (fuzz_registry_files.cpp) and the corpus replay in every build (test_fuzz_corpus.cpp). Input: one
// selector byte (odd: rules table; even below 0x80: slot file; even 0x80-0xDE: SMLP component; even from
// 0xE0: GPC map of the GPU kFuzzGpu), then the file's bytes. The file is written for real into a private registry, then read as the front ends
// and the shim read it. Returns "" when every property holds, else what broke.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "controller/rules_table.hpp"
#include "registry/gpcs_file.h"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"
#include "smlp/smlp_file.hpp"

namespace gpupart::fuzz {

// A private registry root with this user's directory, made once per process and removed at exit.
struct FuzzRegistry {
    std::string root;
    std::string user_dir;
    FuzzRegistry() {
        char name[] = "/tmp/gpupart-fuzz-XXXXXX";
        root = ::mkdtemp(name);
        char dir[512];
        if (gpupart_user_dir(root.c_str(), static_cast<std::uint32_t>(::getuid()), 1, dir, sizeof dir) == 0) user_dir = dir;
    }
    ~FuzzRegistry() {
        std::error_code ignored;
        std::filesystem::remove_all(root, ignored);
    }
};

inline bool one_line_text(const std::string& text) { return text.find('\n') == std::string::npos && !text.empty(); }

inline std::string check_slot_bytes(const FuzzRegistry& registry, std::string_view bytes) {
    const std::string path = registry.user_dir + "/1-1.slot";
    { std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
    try {
        const SlotFile slot = SlotFile::open(path, false);
        const SlotRecord record = slot.read();
        // Bounded by the field: each byte of it becomes at most a 3-byte U+FFFD (valid_utf8).
        if (record.command.size() > 3 * GPUPART_COMMAND_BYTES) return "a command longer than its field allows";
        if (record.shim_version.size() > 3 * 32 || record.start_rule.size() > 3 * 80)
            return "a header string longer than its field allows";
        for (const std::string& gpu : gpus_of(record)) (void)applied_text(record, gpu);
        // The program's own masks (layout 5): never more streams than the slot holds, every one shown.
        if (record.app.streams.size() > GPUPART_APP_STREAMS) return "app stream masks beyond the slot's 64";
        if (!record.app.problem.empty() && !one_line_text(record.app.problem)) return "an app-mask problem that is not one line";
        for (const AppMaskRow& row : app_mask_rows(record.app, TpcMask::range(0, 7), TpcMask::range(0, 65)))
            if (!(row.effective.tpcs & ~TpcMask::range(0, 65)).empty()) return "an effective mask outside the real TPCs";
        // Every string is valid UTF-8: JSON output (list --json, the journal) must never throw on it.
        (void)nlohmann::json({record.command, record.shim_version, record.start_rule}).dump();
    } catch (const RegistryError& error) {
        if (!one_line_text(error.what())) return std::string("slot error not one line: ") + error.what();
    }
    // The whole registry as every front end lists it: problems are values, one line each.
    for (const auto& entry : Registry(registry.root).list()) {
        if (!entry.record && !one_line_text(entry.problem)) return "an unreadable entry without a one-line problem";
        if (entry.record && !entry.problem.empty()) return "an entry both read and refused";
    }
    // As the shim reads its mapping: bounded, never stuck (a copy stands in for the mapping).
    if (bytes.size() >= sizeof(gpupart_slot_file)) {
        gpupart_slot_file page{};
        std::memcpy(&page, bytes.data(), sizeof page);
        gpupart_control control{};
        // A copy the read accepted never carries a count beyond the entries (one it refused is not used).
        if (gpupart_control_read(&page.control, &control, 4) == 0 && control.current.count > GPUPART_MAX_GPUS)
            return "a control count beyond the entries was not clamped";
        for (unsigned i = 0; i < GPUPART_MAX_GPUS; ++i) {
            gpupart_status_gpu entry{};
            (void)gpupart_status_gpu_read(&page.status.gpus[i], &entry, 4);
        }
        gpupart_control_repair(&page.control);
        if ((page.control.seq & 1u) != 0) return "repair left an odd sequence number";
    }
    std::filesystem::remove(path);
    return "";
}

inline std::string check_rules_bytes(const FuzzRegistry& registry, std::string_view bytes) {
    const std::string path = registry.user_dir + "/" + GPUPART_RULES_FILE;
    { std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
    static gpupart_rules_file rules;  // 16 KiB
    const int error = gpupart_rules_read(registry.user_dir.c_str(), static_cast<std::uint32_t>(::getuid()), &rules);
    if (error == 0) {
        const int found = gpupart_rules_match(&rules, "python3", "python3 serve.py --port 1", static_cast<std::uint32_t>(::getuid()));
        if (found < -1 || found >= static_cast<int>(rules.count)) return "a match outside the table";
    }
    try {
        const ArmedRules armed = read_armed_rules(registry.root);
        (void)rules_summary(armed);
        (void)rules_json(armed).dump();
    } catch (const UserError& problem) {
        if (!one_line_text(problem.what())) return std::string("rules error not one line: ") + problem.what();
    }
    std::filesystem::remove(path);
    return "";
}

inline std::string check_smlp_bytes(const FuzzRegistry& registry, std::string_view bytes) {
    const std::string path = registry.user_dir + "/fuzz.smlp";
    { std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
    for (const SmlpEntry& entry : list_smlp_components(registry.root)) {
        if (!entry.component) {
            if (!one_line_text(entry.problem)) return "an SMLP problem that is not one line: " + entry.problem;
            continue;
        }
        // What a component shown must be (smlp_layout.h): grants inside it and disjoint, the free TPCs
        // what the grants leave, at most M in the FQ, h dividing H, every label valid UTF-8 for JSON.
        const SmlpComponent& c = *entry.component;
        if (c.size == 0 || c.granularity == 0 || c.size % static_cast<int>(c.granularity) != 0) return "a component of no TPC or a bad h shown";
        if (c.fq.size() > c.fq_length) return "more FQ records than M shown";
        TpcMask held;
        for (const SmlpRequest& r : c.sq) {
            if (!(r.granted & ~c.tpcs).empty() || !(r.granted & held).empty()) return "a grant outside the component or held twice shown";
            held |= r.granted;
        }
        if (c.free != (c.tpcs & ~held)) return "free TPCs that are not the component less the grants";
        for (const auto* queue : {&c.sq, &c.fq, &c.pq})
            for (const SmlpRequest& r : *queue) (void)nlohmann::json(r.label).dump();
    }
    std::filesystem::remove(path);
    return "";
}

// The GPU whose map the GPC-map inputs are read as (GPU-00010203-0405-0607-0809-0a0b0c0d0e0f).
inline gpupart_gpu_uuid fuzz_gpu() {
    const unsigned char bytes[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    gpupart_gpu_uuid uuid{};
    gpupart_uuid_from_bytes(bytes, &uuid);
    return uuid;
}

// A GPC map as libgpupart reads it (libsmctrl_get_gpc_info): either refused with a documented error, or
// a map of this GPU whose GPCs are non-empty, disjoint and make up exactly its real TPCs.
inline std::string check_gpcs_bytes(const FuzzRegistry& registry, std::string_view bytes) {
    const gpupart_gpu_uuid uuid = fuzz_gpu();
    char path[600];
    if (gpupart_gpcs_path(registry.user_dir.c_str(), &uuid, path, sizeof path) != 0) return "no GPC map path";
    { std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
    gpupart_gpcs_file map{};
    const int error = gpupart_gpcs_read(registry.user_dir.c_str(), static_cast<std::uint32_t>(::getuid()), &uuid, &map);
    std::filesystem::remove(path);
    if (error != 0) {
        if (error == -EPERM || error == -EPROTO || error == -EINVAL || error == -EIO) return "";
        return "a GPC map refused with an undocumented error " + std::to_string(error);
    }
    if (bytes.size() != sizeof map) return "a GPC map of the wrong size accepted";
    if (std::memcmp(&map.uuid, &uuid, sizeof uuid) != 0) return "another GPU's map accepted";
    if (map.gpc_count == 0 || map.gpc_count > GPUPART_MAX_GPCS) return "a map of no GPC or too many accepted";
    std::uint32_t seen[4] = {0, 0, 0, 0};
    unsigned tpcs = 0;
    for (std::uint32_t g = 0; g < map.gpc_count; ++g) {
        std::uint32_t any = 0;
        for (int w = 0; w < 4; ++w) {
            if ((seen[w] & map.gpc_tpcs[g][w]) != 0) return "two GPCs share a TPC in an accepted map";
            seen[w] |= map.gpc_tpcs[g][w];
            any |= map.gpc_tpcs[g][w];
            tpcs += static_cast<unsigned>(__builtin_popcount(map.gpc_tpcs[g][w]));
        }
        if (any == 0) return "an empty GPC in an accepted map";
    }
    for (int w = 0; w < 4; ++w)
        if (seen[w] != map.real_tpcs[w]) return "GPCs that do not make up the real TPCs in an accepted map";
    if (tpcs != map.tpc_count) return "a TPC count that is not the real TPCs' in an accepted map";
    return "";
}

inline std::string check_registry_file_properties(std::string_view input) {
    static const FuzzRegistry registry;
    if (registry.user_dir.empty()) return "cannot make the fuzz registry";
    if (input.empty()) return "";
    const auto selector = static_cast<unsigned char>(input[0]);
    input.remove_prefix(1);
    if ((selector & 1u) != 0) return check_rules_bytes(registry, input);
    if (selector >= 0xE0) return check_gpcs_bytes(registry, input);
    return selector >= 0x80 ? check_smlp_bytes(registry, input) : check_slot_bytes(registry, input);
}

}  // namespace gpupart::fuzz
