#include "sources/mmio_reader.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "sources/mmio_registers.hpp"

namespace gpupart {
namespace {

using mmio::field;

std::string type_name(int type) {
    switch (type) {
    case mmio::kTypeGraphics: return "GRAPHICS";
    case mmio::kTypeSec: return "SEC";
    case mmio::kTypeNvenc0: return "NVENC0";
    case mmio::kTypeNvenc1: return "NVENC1";
    case mmio::kTypeNvdec: return "NVDEC";
    case mmio::kTypeIoctrl: return "IOCTRL";
    case mmio::kTypeLce: return "LCE";
    case mmio::kTypeGsp: return "GSP";
    case mmio::kTypeNvjpg: return "NVJPG";
    case mmio::kTypeHshub: return "HSHUB";
    default: return fmt::format("type {}", type);
    }
}

// Reads registers, remembering each one the source lacks, so every fact that needed it says why.
class Reader {
public:
    explicit Reader(const RegisterSource& registers) : registers_(registers) {}

    std::optional<std::uint32_t> get(std::uint32_t offset, const std::string& name) {
        const auto value = registers_.read32(offset);
        if (!value) missing_.push_back(fmt::format("{} has no {} ({:#010x})", registers_.describe(), name, offset));
        return value;
    }
    Provenance from(const std::string& name, std::uint32_t offset) const {
        return Provenance{Source::mmio, fmt::format("{}: {} ({:#010x})", registers_.describe(), name, offset)};
    }
    template <typename T>
    Fact<T> lacking(const std::string& name, std::uint32_t offset) const {
        return unknown_fact<T>(missing_.empty() ? "not read" : missing_.back(), from(name, offset));
    }
    const std::vector<std::string>& missing() const { return missing_; }
    const RegisterSource& registers() const { return registers_; }

private:
    const RegisterSource& registers_;
    std::vector<std::string> missing_;
};

void decode_floorsweeping(Reader& r, MmioFacts& facts) {
    auto scalar = [&](std::uint32_t offset, const char* name) {
        const auto value = r.get(offset, name);
        return value ? known_fact(static_cast<int>(field(*value, 4, 0)), r.from(name, offset)) : r.lacking<int>(name, offset);
    };
    facts.gpc_slots = scalar(mmio::kPtopScalNumGpcs, "NV_PTOP_SCAL_NUM_GPCS");
    facts.tpc_slots_per_gpc = scalar(mmio::kPtopScalNumTpcPerGpc, "NV_PTOP_SCAL_NUM_TPC_PER_GPC");
    if (!facts.gpc_slots.known() || !facts.tpc_slots_per_gpc.known()) return;
    const int gpcs = *facts.gpc_slots.value;
    const auto disabled_gpcs = r.get(mmio::kFuseStatusOptGpc, "NV_FUSE_STATUS_OPT_GPC");
    if (!disabled_gpcs) {
        facts.enabled_gpcs = r.lacking<std::uint32_t>("NV_FUSE_STATUS_OPT_GPC", mmio::kFuseStatusOptGpc);
        return;
    }
    facts.enabled_gpcs = known_fact(enabled_slots(*disabled_gpcs, gpcs), r.from("NV_FUSE_STATUS_OPT_GPC", mmio::kFuseStatusOptGpc));
    for (int gpc = 0; gpc < gpcs; ++gpc) {
        if ((*facts.enabled_gpcs.value & (1u << gpc)) == 0) continue;
        const std::uint32_t offset = mmio::kFuseStatusOptTpcGpc + 4u * static_cast<std::uint32_t>(gpc);
        const std::string name = fmt::format("NV_FUSE_STATUS_OPT_TPC_GPC({})", gpc);
        const auto disabled = r.get(offset, name);
        facts.enabled_tpcs[gpc] = disabled ? known_fact(enabled_slots(*disabled, *facts.tpc_slots_per_gpc.value), r.from(name, offset))
                                           : r.lacking<std::uint32_t>(name, offset);
    }
}

// The device-info table: devices of 1-3 rows chained by bit 31; empty rows between devices are skipped.
void decode_devices(Reader& r, MmioFacts& facts) {
    const auto config = r.get(mmio::kPtopDeviceInfoCfg, "NV_PTOP_DEVICE_INFO_CFG");
    if (!config) {
        facts.engines = r.lacking<std::vector<MmioEngine>>("NV_PTOP_DEVICE_INFO_CFG", mmio::kPtopDeviceInfoCfg);
        return;
    }
    const std::uint32_t rows = field(*config, 31, 20);
    std::vector<MmioEngine> engines;
    std::vector<std::uint32_t> device;
    for (std::uint32_t i = 0; i < rows; ++i) {
        const std::uint32_t offset = mmio::kPtopDeviceInfo2 + 4 * i;
        const auto row = r.get(offset, fmt::format("NV_PTOP_DEVICE_INFO2({})", i));
        if (!row) {
            facts.engines = r.lacking<std::vector<MmioEngine>>(fmt::format("NV_PTOP_DEVICE_INFO2({})", i), offset);
            return;
        }
        if (*row == 0 && device.empty()) continue;
        device.push_back(*row);
        if (field(*row, 31, 31) != 0 && device.size() < 3) continue;
        MmioEngine e;
        e.fault_id = static_cast<int>(field(device[0], 10, 0));
        e.instance = static_cast<int>(field(device[0], 23, 16));
        e.type = static_cast<int>(field(device[0], 30, 24));
        e.type_name = type_name(e.type);
        if (device.size() > 1) {
            e.reset_id = static_cast<int>(field(device[1], 7, 0));
            e.pri_base = field(device[1], 25, 8) << 8;
            e.is_engine = field(device[1], 30, 30) != 0;
        }
        if (device.size() > 2 && e.is_engine) {
            e.runlist_engine_id = static_cast<int>(field(device[2], 1, 0));
            e.runlist_pri_base = field(device[2], 25, 10) << 10;
        }
        engines.push_back(e);
        device.clear();
    }
    facts.engines = known_fact(engines, r.from("NV_PTOP_DEVICE_INFO2", mmio::kPtopDeviceInfo2));
}

void decode_runlists(Reader& r, MmioFacts& facts) {
    if (!facts.engines.known()) return;
    const auto& engines = *facts.engines.value;
    for (std::size_t i = 0; i < engines.size(); ++i) {
        if (!engines[i].runlist_pri_base) continue;
        const std::uint32_t base = *engines[i].runlist_pri_base;
        auto it = std::find_if(facts.runlists.begin(), facts.runlists.end(), [&](const MmioRunlist& rl) { return rl.pri_base == base; });
        if (it == facts.runlists.end()) it = facts.runlists.insert(facts.runlists.end(), MmioRunlist{base, {}, {}, {}, {}});
        it->engine_indexes.push_back(static_cast<int>(i));
    }
    for (MmioRunlist& runlist : facts.runlists) {
        const std::uint32_t doorbell = runlist.pri_base + mmio::kRunlistDoorbellConfig;
        const auto id = r.get(doorbell, "NV_RUNLIST_DOORBELL_CONFIG");
        runlist.id = id ? known_fact(static_cast<int>(field(*id, 31, 16)), r.from("NV_RUNLIST_DOORBELL_CONFIG", doorbell))
                        : r.lacking<int>("NV_RUNLIST_DOORBELL_CONFIG", doorbell);
        const std::uint32_t channel_config = runlist.pri_base + mmio::kRunlistChannelConfig;
        const auto config = r.get(channel_config, "NV_RUNLIST_CHANNEL_CONFIG");
        if (!config) {
            runlist.channel_slots = r.lacking<int>("NV_RUNLIST_CHANNEL_CONFIG", channel_config);
            runlist.allocated_channels = r.lacking<std::vector<int>>("NV_RUNLIST_CHANNEL_CONFIG", channel_config);
            continue;
        }
        const int slots = 1 << std::min<std::uint32_t>(field(*config, 3, 0), 12);
        runlist.channel_slots = known_fact(slots, r.from("NV_RUNLIST_CHANNEL_CONFIG", channel_config));
        const std::uint32_t chram = field(*config, 31, 4) << 4;
        std::vector<int> allocated;
        bool complete = true;
        for (int channel = 0; channel < slots && complete; ++channel) {
            const std::uint32_t offset = chram + 4u * static_cast<std::uint32_t>(channel);
            const auto word = r.get(offset, fmt::format("NV_CHRAM_CHANNEL({})", channel));
            if (!word) {
                complete = false;
                runlist.allocated_channels = r.lacking<std::vector<int>>(fmt::format("NV_CHRAM_CHANNEL({})", channel), offset);
            } else if ((*word & mmio::kChramChannelEnable) != 0) {
                allocated.push_back(channel);
            }
        }
        if (complete) runlist.allocated_channels = known_fact(allocated, r.from("NV_CHRAM_CHANNEL", chram));
    }
}

void decode_copy_engines(Reader& r, MmioFacts& facts) {
    const auto pce_map = r.get(mmio::kCePceMap, "NV_CE_PCE_MAP");
    if (!pce_map) {
        facts.pce_map = r.lacking<std::uint32_t>("NV_CE_PCE_MAP", mmio::kCePceMap);
        facts.copy_engines = r.lacking<std::vector<MmioCopyEngine>>("NV_CE_PCE_MAP", mmio::kCePceMap);
        return;
    }
    facts.pce_map = known_fact(*pce_map, r.from("NV_CE_PCE_MAP", mmio::kCePceMap));
    std::map<int, std::uint32_t> pces_of_lce;
    for (int pce = 0; pce < 32; ++pce) {
        if ((*pce_map & (1u << pce)) == 0) continue;
        const std::uint32_t offset = mmio::kCePce2LceConfig + 4u * static_cast<std::uint32_t>(pce);
        const std::string name = fmt::format("NV_CE_PCE2LCE_CONFIG({})", pce);
        const auto config = r.get(offset, name);
        if (!config) {
            facts.copy_engines = r.lacking<std::vector<MmioCopyEngine>>(name, offset);
            return;
        }
        const int lce = static_cast<int>(field(*config, 3, 0));
        if (lce != 0xf) pces_of_lce[lce] |= 1u << pce;
    }
    std::vector<MmioCopyEngine> engines;
    for (int grce = 0; grce < mmio::kGrceCount; ++grce) {
        if (pces_of_lce.contains(grce)) continue;  // a GRCE with PCEs of its own shares nothing
        const std::uint32_t offset = mmio::kCeGrceConfig + 4u * static_cast<std::uint32_t>(grce);
        const std::string name = fmt::format("NV_CE_GRCE_CONFIG({})", grce);
        const auto config = r.get(offset, name);
        if (!config) {
            facts.copy_engines = r.lacking<std::vector<MmioCopyEngine>>(name, offset);
            return;
        }
        const int shared = static_cast<int>(field(*config, 3, 0));
        if (field(*config, 30, 30) == 0 || shared == 0xf) continue;
        const auto it = pces_of_lce.find(shared);
        engines.push_back(MmioCopyEngine{grce, it != pces_of_lce.end() ? it->second : 0u, shared});
    }
    for (const auto& [lce, mask] : pces_of_lce) engines.push_back(MmioCopyEngine{lce, mask, std::nullopt});
    std::sort(engines.begin(), engines.end(), [](const MmioCopyEngine& a, const MmioCopyEngine& b) { return a.lce < b.lce; });
    facts.copy_engines = known_fact(engines, r.from("NV_CE_PCE2LCE_CONFIG / NV_CE_GRCE_CONFIG", mmio::kCePce2LceConfig));
}

const char* architecture_name(int architecture) {
    switch (architecture) {
    case 0x16: return "Turing";
    case 0x17: return "Ampere";
    case 0x18: return "Hopper";
    case 0x19: return "Ada";
    case 0x1a: return "Blackwell";
    default: return "another architecture";
    }
}

}  // namespace

MmioFacts decode_mmio(const RegisterSource& registers) {
    MmioFacts facts;
    Reader r(registers);
    const auto boot0 = r.get(mmio::kPmcBoot0, "NV_PMC_BOOT_0");
    if (!boot0) {
        facts.status = SourceStatus{Source::mmio, SourceState::failed, r.missing().front()};
        return facts;
    }
    if (*boot0 == 0xffffffffu || (*boot0 & 0xffff0000u) == 0xbadf0000u) {
        facts.status = SourceStatus{Source::mmio, SourceState::failed,
                                    fmt::format("{}: NV_PMC_BOOT_0 reads {:#x}: the GPU is not answering", registers.describe(), *boot0)};
        return facts;
    }
    const int architecture = static_cast<int>(field(*boot0, 28, 24));
    facts.architecture = known_fact(architecture, r.from("NV_PMC_BOOT_0 ARCHITECTURE", mmio::kPmcBoot0));
    facts.implementation = known_fact(static_cast<int>(field(*boot0, 23, 20)), r.from("NV_PMC_BOOT_0 IMPLEMENTATION", mmio::kPmcBoot0));
    if (architecture < 0x17 || architecture > 0x19) {
        facts.status = SourceStatus{Source::mmio, SourceState::unsupported,
                                    fmt::format("{}: architecture {:#x} ({}) is not one whose register layouts gpupart uses "
                                                "(Ampere, Hopper, Ada)",
                                                registers.describe(), architecture, architecture_name(architecture))};
        return facts;
    }
    decode_floorsweeping(r, facts);
    decode_devices(r, facts);
    decode_runlists(r, facts);
    decode_copy_engines(r, facts);
    facts.status = r.missing().empty()
                       ? SourceStatus{Source::mmio, SourceState::ok,
                                      fmt::format("{}: {} (architecture {:#x})", registers.describe(),
                                                  architecture_name(architecture), architecture)}
                       : SourceStatus{Source::mmio, SourceState::failed,
                                      fmt::format("{} ({} register(s) missing)", r.missing().front(), r.missing().size())};
    return facts;
}

MmioFacts read_mmio(const std::string& bus_id, const std::string& sysfs_root) {
    Bar0Open bar0 = open_bar0(bus_id, sysfs_root);
    if (!bar0.registers) {
        MmioFacts facts;
        facts.status = bar0.status;
        return facts;
    }
    return decode_mmio(*bar0.registers);
}

MmioFacts read_mmio_image(const std::string& path) { return decode_mmio(RegisterImage::load(path)); }

}  // namespace gpupart
