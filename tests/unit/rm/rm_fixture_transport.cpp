#include "rm_fixture_transport.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

namespace gpupart::test {
namespace {

// Offsets and sizes as NVIDIA's open-gpu-kernel-modules headers (branch 580) give them, spelled out independently of the reader.
std::uint32_t get32(std::span<const std::byte> b, std::size_t at) {
    if (at + 4 > b.size()) throw std::logic_error("fixture: read past a parameter block");
    std::uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
}
std::uint16_t get16(std::span<const std::byte> b, std::size_t at) {
    if (at + 2 > b.size()) throw std::logic_error("fixture: read past a parameter block");
    std::uint16_t v;
    std::memcpy(&v, b.data() + at, 2);
    return v;
}
std::uint64_t get64(std::span<const std::byte> b, std::size_t at) {
    if (at + 8 > b.size()) throw std::logic_error("fixture: read past a parameter block");
    std::uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
}
template <typename T>
void put(std::span<std::byte> b, std::size_t at, T v) {
    if (at + sizeof(T) > b.size()) throw std::logic_error("fixture: write past a parameter block");
    std::memcpy(b.data() + at, &v, sizeof(T));
}
void put_bytes(std::span<std::byte> b, const std::vector<std::uint8_t>& bytes) {
    if (bytes.size() > b.size()) throw std::logic_error("fixture: recorded bytes longer than the block");
    std::memcpy(b.data(), bytes.data(), bytes.size());
}
// `text` at `at`, NUL-terminated when it is shorter than the field's `size` bytes (cut at the field otherwise).
void put_text(std::span<std::byte> b, std::size_t at, const std::string& text, std::size_t size) {
    if (at + size > b.size()) throw std::logic_error("fixture: text field past a parameter block");
    std::memset(b.data() + at, 0, size);
    std::memcpy(b.data() + at, text.data(), std::min(text.size(), size));
}

constexpr std::uint32_t kClient = 0xc1d00022;  // handles as the recording printed them
constexpr std::uint32_t kDevice = 0xcaf00001;
constexpr std::uint32_t kSubdevice = 0xcaf00002;

// Exact parameter sizes the driver demands (else NV_ERR_INVALID_PARAM_STRUCT, 0x3A).
const std::map<std::uint32_t, std::size_t> kSizes = {
    {0x205, 32},         {0x2080122A, 24},   {0x2080122B, 24},  {0x20801234, 8},   {0x20801228, 488},
    {0x2080121B, 9240},  {0x20803801, 1928}, {0x20800170, 340}, {0x20800179, 1008}, {0x20801109, 2056},
    {0x20801119, 516},   {0x20802A0A, 136},  {0x20802A02, 8},   {0x20800102, 564},  {0x2080018D, 3812},
    {0x2080014A, 268},   {0x20800110, 132},
};

// The recorded GR0, COPY0..4 runlist query (replies2: "rlId (0, 0, 0, 1, 3, 10)").
constexpr std::uint32_t kRecordedRunlistEngines[] = {0x01, 0x09, 0x0a, 0x0b, 0x0c, 0x0d};

}  // namespace

RmFixtureTransport::RmFixtureTransport(RecordedRm recorded, FixtureFaults faults)
    : recorded_(std::move(recorded)), faults_(std::move(faults)) {}

void RmFixtureTransport::open_control() {
    if (faults_.open_control_errno)
        throw RmOsError(*faults_.open_control_errno, "/dev/nvidiactl: " + std::string(std::strerror(*faults_.open_control_errno)));
    control_open_ = true;
}

void RmFixtureTransport::open_gpu_node(unsigned minor) {
    if (faults_.gpu_node_errno) throw RmOsError(*faults_.gpu_node_errno, gpu_node_path(minor) + ": " + std::strerror(*faults_.gpu_node_errno));
    if (minor != recorded_.minor) throw RmOsError(ENOENT, gpu_node_path(minor) + ": No such file or directory");
    gpu_node_open_ = true;
}

void RmFixtureTransport::close_gpu_node() { gpu_node_open_ = false; }

void RmFixtureTransport::escape(std::uint8_t nr, std::span<std::byte> arg) {
    if (!control_open_) throw RmOsError(EBADF, "/dev/nvidiactl: not open");
    escapes_.push_back(nr);
    switch (nr) {
        case 210: {  // NV_ESC_CHECK_VERSION_STR, 72 B: cmd @0, reply @4, versionString[64] @8
            if (arg.size() != 72) throw RmOsError(EINVAL, "version escape of the wrong size");
            if (get32(arg, 0) != '2') throw std::logic_error("fixture: the reader must only query the version (cmd '2')");
            const std::string version = faults_.driver_version.value_or(recorded_.version);
            put<std::uint32_t>(arg, 4, 1);
            std::memset(arg.data() + 8, 0, 64);
            std::memcpy(arg.data() + 8, version.data(), std::min<std::size_t>(version.size(), 63));
            return;
        }
        case 200: {  // NV_ESC_CARD_INFO: 72-byte entries; the recording holds one GPU
            if (arg.empty() || arg.size() % 72) throw RmOsError(EINVAL, "card info of the wrong size");
            std::memset(arg.data(), 0, arg.size());
            unsigned domain = 0, bus = 0, slot = 0, function = 0;
            if (std::sscanf(faults_.bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4)
                throw std::logic_error("fixture: bad bus id");
            put<std::uint8_t>(arg, 0, 1);
            put<std::uint32_t>(arg, 4, domain);
            put<std::uint8_t>(arg, 8, static_cast<std::uint8_t>(bus));
            put<std::uint8_t>(arg, 9, static_cast<std::uint8_t>(slot));
            put<std::uint8_t>(arg, 10, static_cast<std::uint8_t>(function));
            put<std::uint16_t>(arg, 12, 0x10de);
            put<std::uint32_t>(arg, 16, recorded_.gpu_id);
            put<std::uint32_t>(arg, 56, recorded_.minor);
            return;
        }
        case 0x2B: return alloc(arg);
        case 0x2A: return control(arg);
        case 0x29:  // NV_ESC_RM_FREE, NVOS00 16 B
            if (arg.size() != 16) throw RmOsError(EINVAL, "free of the wrong size");
            client_freed_ = get32(arg, 8) == client_ && client_ != 0;
            put<std::uint32_t>(arg, 12, 0);
            return;
        default: throw std::logic_error("fixture: escape " + std::to_string(nr) + " was not recorded");
    }
}

// NVOS21 (32 B): hRoot @0, hObjectParent @4, hObjectNew @8, hClass @12, pAllocParms @16, status @28.
void RmFixtureTransport::alloc(std::span<std::byte> arg) {
    if (arg.size() != 32) throw RmOsError(EINVAL, "alloc of the wrong size");
    const std::uint32_t parent = get32(arg, 4);
    const std::uint32_t class_id = get32(arg, 12);
    const auto* params = reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(get64(arg, 16)));
    std::uint32_t status = 0;
    std::uint32_t handle = 0;
    if (class_id == 0x41 && parent == 0) {
        handle = client_ = kClient;
    } else if (class_id == 0x80 && parent == client_ && client_ != 0) {
        // NV0080_ALLOC_PARAMETERS: deviceId @0 must be the GPU's deviceInstance; the GPU's node must be open.
        const std::uint32_t device_id = get32(std::span(params, 56), 0);
        if (faults_.device_alloc_status) status = *faults_.device_alloc_status;
        else if (!gpu_node_open_) status = 0x1B;  // "dev-noopen ... 0x1b" in the recording
        else if (device_id != recorded_.device_instance) status = 0x1F;
        else handle = kDevice;
    } else if (class_id == 0x2080 && parent == kDevice) {
        handle = subdevice_ = kSubdevice;
    } else {
        status = 0x1F;
    }
    put<std::uint32_t>(arg, 8, handle);
    put<std::uint32_t>(arg, 28, status);
}

// NVOS54 (32 B): hClient @0, hObject @4, cmd @8, flags @12, params @16, paramsSize @24, status @28.
void RmFixtureTransport::control(std::span<std::byte> arg) {
    if (arg.size() != 32) throw RmOsError(EINVAL, "control of the wrong size");
    const std::uint32_t cmd = get32(arg, 8);
    controls_.push_back(cmd);
    if (faults_.control_errno_cmd == cmd) throw RmOsError(EPERM, "/dev/nvidiactl: ioctl escape 0x2a: Operation not permitted");
    const std::uint32_t object = get32(arg, 4);
    const bool on_client = (cmd >> 16) == 0;
    if (get32(arg, 0) != client_ || object != (on_client ? client_ : subdevice_) || object == 0) {
        put<std::uint32_t>(arg, 28, 0x1F);
        return;
    }
    const auto size = static_cast<std::size_t>(get32(arg, 24));
    const auto expected = kSizes.find(cmd);
    if (expected == kSizes.end()) {
        put<std::uint32_t>(arg, 28, kNotRecorded);
        return;
    }
    if (size != expected->second) {
        put<std::uint32_t>(arg, 28, 0x3A);
        return;
    }
    auto* params = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(get64(arg, 16)));
    put<std::uint32_t>(arg, 28, answer(cmd, std::span(params, size)));
}

std::uint32_t RmFixtureTransport::answer(std::uint32_t cmd, std::span<std::byte> p) {
    const auto& r = recorded_;
    switch (cmd) {
        case 0x205:  // GPU_GET_ID_INFO_V2: gpuId @0 in, deviceInstance @8 out
            if (get32(p, 0) != r.gpu_id) return 0x1F;
            put<std::uint32_t>(p, 8, r.device_instance);
            return 0;
        case 0x2080122A:  // GR_GET_GPC_MASK: gpcMask @16
            put<std::uint32_t>(p, 16, r.gpc_mask);
            return r.blocks.at("GPC_MASK").status;
        case 0x2080122B: {  // GR_GET_TPC_MASK: gpcId @16 (physical) in, tpcMask @20 out
            const auto it = r.gpcs.find(static_cast<int>(get32(p, 16)));
            if (it == r.gpcs.end()) return kNotRecorded;
            put<std::uint32_t>(p, 20, it->second.mask);
            return it->second.mask_status;
        }
        case 0x20801234: {  // GR_GET_NUM_TPCS_FOR_GPC: gpcId @0 (logical) in, numTpcs @4 out
            const auto it = r.gpcs.find(static_cast<int>(get32(p, 0)));
            if (it == r.gpcs.end()) return kNotRecorded;
            put<std::uint32_t>(p, 4, it->second.count);
            return it->second.count_status;
        }
        case 0x20801228: {  // GR_GET_INFO_V2: grInfoListSize @0, {index, data}[] @4
            const std::uint32_t count = get32(p, 0);
            for (std::uint32_t i = 0; i < count; ++i) {
                const auto it = r.gr_info.find(get32(p, 4 + 8 * i));
                if (it == r.gr_info.end()) return kNotRecorded;
                put<std::uint32_t>(p, 8 + 8 * i, it->second);
            }
            return r.blocks.at("GR_INFO_V2").status;
        }
        case 0x2080121B:  // GR_GET_GLOBAL_SM_ORDER: 18-byte entries @0, numSm @9216, numTpc @9218
            for (std::size_t k = 0; k < r.sm_order.size(); ++k)
                for (std::size_t f = 0; f < 9; ++f) put<std::uint16_t>(p, 18 * k + 2 * f, r.sm_order[k][f]);
            put<std::uint16_t>(p, 9216, static_cast<std::uint16_t>(r.sm_count));
            put<std::uint16_t>(p, 9218, static_cast<std::uint16_t>(r.tpc_count));
            return r.blocks.at("SM_ORDER").status;
        case 0x20803801: {  // GRMGR_GET_GR_FS_INFO: u16 numQueries @0, 20-byte queries @8
            const std::uint16_t count = get16(p, 0);
            for (std::size_t q = 0; q < count; ++q) {
                const std::size_t at = 8 + 20 * q;
                const std::uint16_t type = get16(p, at);
                const std::uint32_t gpc = get32(p, at + 8);
                const RecordedGrfs* found = nullptr;
                for (const auto& g : r.grfs)
                    if (g.type == type && (type == 1 || g.data[0] == gpc)) found = &g;
                if (!found) {
                    put<std::uint32_t>(p, at + 4, kNotRecorded);
                    continue;
                }
                put<std::uint32_t>(p, at + 4, found->status);
                if (type == 1) put<std::uint32_t>(p, at + 8, found->data[0]);
                else put<std::uint32_t>(p, at + 12, found->data[1]);
            }
            return r.blocks.at("GRFS").status;
        }
        case 0x20800170:  // GPU_GET_ENGINES_V2: engineCount @0, engineList @4
            put<std::uint32_t>(p, 0, static_cast<std::uint32_t>(r.engines.size()));
            for (std::size_t i = 0; i < r.engines.size(); ++i) put<std::uint32_t>(p, 4 + 4 * i, r.engines[i]);
            return r.blocks.at("ENG_V2").status;
        case 0x20800179: {  // GPU_GET_ENGINE_RUNLIST_PRI_BASE: engineList @0, runlistPriBase @336, runlistId @672
            const std::uint32_t status = r.blocks2.at("RLBASE").status;
            if (status != 0) return status;
            for (std::size_t i = 0; i < 84 && get32(p, 4 * i) != 0; ++i) {
                const std::uint32_t engine = get32(p, 4 * i);
                std::uint32_t base = 0xFFFFFFFB, id = 0xFFFFFFFF;  // not recorded: the driver's "error" values
                for (std::size_t k = 0; k < std::size(kRecordedRunlistEngines); ++k)
                    if (kRecordedRunlistEngines[k] == engine) {
                        base = r.runlist_bases.at(k);
                        id = r.runlist_ids.at(k);
                    }
                put<std::uint32_t>(p, 336 + 4 * i, base);
                put<std::uint32_t>(p, 672 + 4 * i, id);
            }
            return 0;
        }
        case 0x20801109: {  // FIFO_GET_INFO: fifoInfoTblSize @0, {index, data}[] @4, engineType @2052
            const std::uint32_t count = get32(p, 0);
            const std::uint32_t engine = get32(p, 2052);
            for (std::uint32_t i = 0; i < count; ++i) {
                const std::uint32_t index = get32(p, 4 + 8 * i);
                if (index == 9 && engine != 0x01) return kNotRecorded;  // the recording asked the per-engine count of GR0 only
                if (index == 7) {
                    if (!faults_.per_runlist_channel_ram) return kNotRecorded;
                    put<std::uint32_t>(p, 8 + 8 * i, *faults_.per_runlist_channel_ram);
                    continue;
                }
                bool found = false;
                for (const auto& [recorded_index, value] : r.fifo_info)
                    if (recorded_index == index) {
                        put<std::uint32_t>(p, 8 + 8 * i, value);
                        found = true;
                    }
                if (!found) return kNotRecorded;
            }
            return r.blocks.at("FIFO_INFO").status;
        }
        case 0x20801119: {  // FIFO_GET_ALLOCATED_CHANNELS: runlistId @0, bitMask[128] @4 (raw bytes recorded for runlist 0)
            const RecordedBlock& block = r.blocks.at("ALLOCCH");
            if (block.status != 0) return block.status;
            if (get32(p, 0) != 0) return kNotRecorded;
            put_bytes(p, hex_bytes(block.lines.at(0)));
            return 0;
        }
        case 0x20802A0A:  // CE_GET_ALL_CAPS: capsTbl[64][2] @0, present @128
            put_bytes(p, r.ce_caps_bytes);
            put<std::uint64_t>(p, 128, r.ce_present);
            return r.blocks.at("CE_ALLCAPS").status;
        case 0x20802A02: {  // CE_GET_CE_PCE_MASK: ceEngineType @0, pceMask @4
            const auto it = r.copy_engines.find(get32(p, 0));
            if (it == r.copy_engines.end()) return kNotRecorded;
            put<std::uint32_t>(p, 4, it->second.pce_mask);
            return it->second.pce_status;
        }
        case 0x20800102: {  // GPU_GET_INFO_V2: gpuInfoListSize @0, {index, data}[] @4
            const std::uint32_t count = get32(p, 0);
            for (std::uint32_t i = 0; i < count; ++i) {
                if (get32(p, 4 + 8 * i) != r.smc.first) return kNotRecorded;
                put<std::uint32_t>(p, 8 + 8 * i, r.smc.second);
            }
            return r.blocks.at("GPU_INFO_V2").status;
        }
        case 0x2080018D: {  // GPU_GET_PIDS: the recorded raw bytes (idType 0, id 0x2080, count, pids)
            if (get32(p, 0) != 0 || get32(p, 4) != 0x2080) return kNotRecorded;
            const RecordedBlock& block = r.blocks.at("PIDS");
            put_bytes(p, hex_bytes(block.lines.at(0)));
            return block.status;
        }
        case 0x2080014A:  // GPU_GET_GID_INFO: index @0, flags @4 (0: ASCII SHA-1) in; length @8, data[256] @12 out
            if (!faults_.gid || get32(p, 4) != 0) return kNotRecorded;
            put<std::uint32_t>(p, 8, static_cast<std::uint32_t>(faults_.gid->size() + 1));
            put_text(p, 12, *faults_.gid, 256);
            return 0;
        case 0x20800110:  // GPU_GET_NAME_STRING: flags @0 (0: ASCII) in; ascii[128] @4 out
            if (!faults_.name || get32(p, 0) != 0) return kNotRecorded;
            put_text(p, 4, *faults_.name, 128);
            return 0;
        default: return kNotRecorded;
    }
}

}  // namespace gpupart::test
