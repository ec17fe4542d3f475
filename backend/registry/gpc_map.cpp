// GPC map files from a GPU's model (gpc_map.hpp).
#include "registry/gpc_map.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "registry/gpcs_file.h"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"

namespace gpupart {
namespace {

bool parse_uuid(const Gpu& gpu, gpupart_gpu_uuid& uuid) {
    const std::optional<std::string>& text = gpu.uuid.value;
    return text && text->size() == 40 && gpupart_uuid_parse(text->c_str(), &uuid) == 40 && !gpupart_uuid_is_zero(&uuid);
}

}  // namespace

std::string gpc_map_unavailable_reason(const Gpu& gpu) {
    gpupart_gpu_uuid uuid{};
    if (!parse_uuid(gpu, uuid))
        return fmt::format("GPU {} has no UUID in this snapshot (a built-in recording names no board): its GPC map "
                           "would name no real GPU", gpu.index);
    if (!mask_bits_known(gpu)) return fmt::format("GPU {}: {}", gpu.index, mask_bits_unknown_reason(gpu));
    std::string why;
    if (!TpcNumbering::try_of(gpu, &why)) return fmt::format("GPU {}: {}", gpu.index, why);
    if (!undetermined_gpc_tpcs(gpu).empty())
        return fmt::format("GPU {}: the GPC of TPCs {} is not known", gpu.index, undetermined_gpc_tpcs(gpu).to_list());
    if (gpu.gpcs.size() > GPUPART_MAX_GPCS) return fmt::format("GPU {} has more than {} GPCs", gpu.index, GPUPART_MAX_GPCS);
    if (real_tpcs(gpu).empty()) return fmt::format("GPU {} has no TPC with a known mask bit", gpu.index);
    return "";
}

gpupart_gpcs_file gpc_map_of(const Gpu& gpu, const std::string& source) {
    const std::string reason = gpc_map_unavailable_reason(gpu);
    if (!reason.empty()) throw UserError("no GPC map: " + reason);
    gpupart_gpcs_file map{};
    std::memcpy(map.magic, GPUPART_GPCS_MAGIC, sizeof map.magic);
    map.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    map.file_size = sizeof map;
    parse_uuid(gpu, map.uuid);
    const TpcNumbering numbering = TpcNumbering::of(gpu);
    const TpcMask real = numbering.to_bits(real_tpcs(gpu));
    const auto real_words = real.words32();
    std::memcpy(map.real_tpcs, real_words.data(), sizeof map.real_tpcs);
    map.tpc_count = static_cast<std::uint32_t>(real.count());
    std::memset(map.bit_of_tpc, GPUPART_GPCS_NO_TPC, sizeof map.bit_of_tpc);
    for (int number = 0; number < numbering.tpc_count(); ++number)
        map.bit_of_tpc[number] = static_cast<std::uint8_t>(*numbering.bit_of(number));
    for (const Gpc& gpc : gpu.gpcs) {
        const TpcMask tpcs = numbering.to_bits(gpc_tpcs(gpu, gpc.index));
        if (tpcs.empty()) continue;
        const auto words = tpcs.words32();
        std::memcpy(map.gpc_tpcs[map.gpc_count++], words.data(), sizeof map.gpc_tpcs[0]);
    }
    std::snprintf(map.source, sizeof map.source, "%s", source.c_str());
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    map.written_realtime_ns = static_cast<std::uint64_t>(now.tv_sec) * 1000000000u + static_cast<std::uint64_t>(now.tv_nsec);
    if (gpupart_gpcs_check(&map) != 0) throw UserError(fmt::format("GPU {}: its GPCs do not cover its TPCs exactly once", gpu.index));
    return map;
}

std::string write_gpc_map(const std::string& user_dir, const gpupart_gpcs_file& map) {
    char path[512];
    if (gpupart_gpcs_path(user_dir.c_str(), &map.uuid, path, sizeof path) != 0) throw RegistryError(user_dir + ": path too long");
    const int error = gpupart_gpcs_write(user_dir.c_str(), &map);
    if (error == -ELOOP) throw RegistryError(fmt::format("{} is a symbolic link: not replaced (remove it)", path));
    if (error == -EINVAL) throw RegistryError(fmt::format("{} is not a regular file: not replaced (remove it)", path));
    if (error != 0) throw RegistryError(fmt::format("cannot write {}: {}", path, std::strerror(-error)));
    return path;
}

}  // namespace gpupart
