#pragma once
// BAR0 register addresses and fields the MMIO reader uses: only ones NVIDIA publishes, each with where.
//   [tu104-top]  open-gpu-doc manuals/turing/tu104/dev_top.ref.txt
//   [ga100-boot] open-gpu-doc manuals/ampere/ga100/dev_boot.ref.txt
//   [ga100-top]  open-gpu-kernel-modules src/common/inc/swref/published/ampere/ga100/dev_top.h, and the
//                DEVICE_INFO2 field layout of NVIDIA's nvgpu hw_top_ga10b.h (rows of 32 bits)
//   [ga100-fuse] NVIDIA's nvgpu hw_fuse_ga100.h (fuse_status_opt_gpc_r, fuse_status_opt_tpc_gpc_r)
//   [ga100-rl]   open-gpu-doc manuals/ampere/ga100/dev_runlist.ref.txt
//   [ga102-ce]   open-gpu-doc manuals/ampere/ga102/dev_ce.ref.txt; the same fields in
//                open-gpu-kernel-modules published/hopper/gh100/dev_ce.h
// These layouts hold from Ampere on (the device-info, fuse and runlist registers moved there), so the
// reader accepts architectures 0x17 (Ampere), 0x18 (Hopper) and 0x19 (Ada) and refuses the others.
#include <cstdint>

namespace gpupart::mmio {

constexpr std::uint32_t kPmcBoot0 = 0x00000000;  // [ga100-boot] ARCHITECTURE 28:24, IMPLEMENTATION 23:20
constexpr std::uint32_t kPtopScalNumGpcs = 0x00022430;       // [tu104-top] VALUE 4:0
constexpr std::uint32_t kPtopScalNumTpcPerGpc = 0x00022434;  // [tu104-top] VALUE 4:0
constexpr std::uint32_t kPtopDeviceInfoCfg = 0x000224fc;     // [ga100-top] NUM_ROWS 31:20
constexpr std::uint32_t kPtopDeviceInfo2 = 0x00022800;       // [ga100-top] (i)*4; ROW_CHAIN 31:31
constexpr std::uint32_t kFuseStatusOptGpc = 0x00820c1c;      // [ga100-fuse] a set bit is a disabled GPC
constexpr std::uint32_t kFuseStatusOptTpcGpc = 0x00820c38;   // [ga100-fuse] (i)*4; a set bit is a disabled TPC
constexpr std::uint32_t kRunlistChannelConfig = 0x004;  // [ga100-rl] from the runlist PRI base: NUM_CHANNELS_LOG2 3:0,
                                                        //            CHRAM_BAR0_OFFSET 31:4 (in units of 16 bytes)
constexpr std::uint32_t kRunlistDoorbellConfig = 0x008;  // [ga100-rl] ID 31:16 (the runlist id)
constexpr std::uint32_t kChramChannelEnable = 1u << 1;   // [ga100-rl] NV_CHRAM_CHANNEL(i) ENABLE 1:1 = IN_USE
constexpr std::uint32_t kCePceMap = 0x00104028;          // [ga102-ce] a set bit is a present PCE
constexpr std::uint32_t kCePce2LceConfig = 0x00104100;   // [ga102-ce] (i)*4; PCE_ASSIGNED_LCE 3:0, 0xf = none
constexpr std::uint32_t kCeGrceConfig = 0x001041c0;      // [ga102-ce] (i)*4, i < 2; SHARED_LCE 3:0 (0xf none), SHARED 30:30
constexpr int kGrceCount = 2;

// DEVICE_INFO2 fields, by row ([ga100-top]).
constexpr std::uint32_t field(std::uint32_t value, int high, int low) { return (value >> low) & ((2u << (high - low)) - 1u); }

// NV_PTOP_DEVICE_INFO_TYPE_ENUM values [tu104-top] (expected "to stay constant across GPUs and
// architectures"), plus HSHUB from published DEVICE_INFO2_DEV_TYPE_ENUM_HSHUB.
constexpr int kTypeGraphics = 0;
constexpr int kTypeSec = 13;
constexpr int kTypeNvenc0 = 14;
constexpr int kTypeNvenc1 = 15;
constexpr int kTypeNvdec = 16;
constexpr int kTypeIoctrl = 18;
constexpr int kTypeLce = 19;
constexpr int kTypeGsp = 20;
constexpr int kTypeNvjpg = 21;
constexpr int kTypeHshub = 24;

}  // namespace gpupart::mmio
