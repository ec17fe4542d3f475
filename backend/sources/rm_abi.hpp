#pragma once
// gpupart's own declarations of the few NVIDIA kernel-driver structures the RM-control reader needs:
// the ioctl escapes of /dev/nvidiactl and the argument blocks of RM_ALLOC, RM_CONTROL and RM_FREE.
// Layouts and numbers are those of driver branch 580 on x86-64 (checked against NVIDIA's published
// open-gpu-kernel-modules headers of 580.142); every size and offset the driver checks is pinned below
// with a static_assert.
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpupart::rm {

// Escape numbers (nv-ioctl-numbers.h, nv_escape.h). The request is _IOWR('F', nr, size).
inline constexpr std::uint8_t kEscRmFree = 0x29;
inline constexpr std::uint8_t kEscRmControl = 0x2A;
inline constexpr std::uint8_t kEscRmAlloc = 0x2B;
inline constexpr std::uint8_t kEscCardInfo = 200;
inline constexpr std::uint8_t kEscCheckVersionStr = 210;

constexpr std::uint32_t ioctl_request(std::uint8_t nr, std::size_t size) {
    return 0xC0000000u | (static_cast<std::uint32_t>(size) << 16) | (0x46u << 8) | nr;
}

// Object classes.
inline constexpr std::uint32_t kClassRootClient = 0x41;    // NV01_ROOT_CLIENT
inline constexpr std::uint32_t kClassDevice = 0x80;        // NV01_DEVICE_0
inline constexpr std::uint32_t kClassSubdevice = 0x2080;   // NV20_SUBDEVICE_0

using Handle = std::uint32_t;

// NVOS21_PARAMETERS: NV_ESC_RM_ALLOC.
struct AllocArgs {
    Handle root = 0;
    Handle parent = 0;
    Handle object_new = 0;  // in/out: 0 lets RM pick
    std::uint32_t class_id = 0;
    std::uint64_t alloc_params = 0;  // user pointer
    std::uint32_t params_size = 0;
    std::uint32_t status = 0;
};
static_assert(sizeof(AllocArgs) == 32 && offsetof(AllocArgs, alloc_params) == 16 && offsetof(AllocArgs, status) == 28);

// NVOS54_PARAMETERS: NV_ESC_RM_CONTROL. params_size must equal the control's exact size.
struct ControlArgs {
    Handle client = 0;
    Handle object = 0;
    std::uint32_t cmd = 0;
    std::uint32_t flags = 0;
    std::uint64_t params = 0;  // user pointer
    std::uint32_t params_size = 0;
    std::uint32_t status = 0;
};
static_assert(sizeof(ControlArgs) == 32 && offsetof(ControlArgs, params) == 16 && offsetof(ControlArgs, status) == 28);

// NVOS00_PARAMETERS: NV_ESC_RM_FREE.
struct FreeArgs {
    Handle root = 0;
    Handle parent = 0;
    Handle object_old = 0;
    std::uint32_t status = 0;
};
static_assert(sizeof(FreeArgs) == 16);

// nv_ioctl_rm_api_version_t: NV_ESC_CHECK_VERSION_STR. cmd '2' only asks; it keeps no state.
struct VersionArgs {
    std::uint32_t cmd = 0;
    std::uint32_t reply = 0;  // 1 = the driver recognised the request
    char version[64] = {};
};
static_assert(sizeof(VersionArgs) == 72);
inline constexpr std::uint32_t kVersionCmdQuery = '2';
inline constexpr std::uint32_t kVersionReplyRecognized = 1;

// nv_ioctl_card_info_t: one entry of NV_ESC_CARD_INFO's array.
struct CardInfoEntry {
    std::uint8_t valid = 0;
    std::uint8_t pad0[3] = {};
    std::uint32_t pci_domain = 0;
    std::uint8_t pci_bus = 0;
    std::uint8_t pci_slot = 0;
    std::uint8_t pci_function = 0;
    std::uint8_t pad1 = 0;
    std::uint16_t vendor_id = 0;
    std::uint16_t device_id = 0;
    std::uint32_t gpu_id = 0;
    std::uint16_t interrupt_line = 0;
    std::uint8_t pad2[2] = {};
    std::uint64_t reg_address = 0;
    std::uint64_t reg_size = 0;
    std::uint64_t fb_address = 0;
    std::uint64_t fb_size = 0;
    std::uint32_t minor_number = 0;
    char dev_name[10] = {};
};
static_assert(sizeof(CardInfoEntry) == 72 && offsetof(CardInfoEntry, gpu_id) == 16 &&
              offsetof(CardInfoEntry, reg_address) == 24 && offsetof(CardInfoEntry, minor_number) == 56);
// The driver refuses an array shorter than its GPU count (-EINVAL); 64 entries is 4608 bytes.
inline constexpr std::size_t kCardInfoEntries = 64;

// NV0080_ALLOC_PARAMETERS (56 bytes): deviceId is the deviceInstance from GPU_GET_ID_INFO_V2.
inline constexpr std::size_t kDeviceAllocSize = 56;
inline constexpr std::size_t kDeviceAllocClientShareOffset = 4;
// NV2080_ALLOC_PARAMETERS {subDeviceId}.
inline constexpr std::size_t kSubdeviceAllocSize = 4;

// RM status codes (nvstatuscodes.h) gpupart tells apart.
inline constexpr std::uint32_t kOk = 0x00;
inline constexpr std::uint32_t kErrInsufficientPermissions = 0x1B;
inline constexpr std::uint32_t kErrInvalidArgument = 0x1F;
inline constexpr std::uint32_t kErrInvalidParamStruct = 0x3A;
inline constexpr std::uint32_t kErrNotSupported = 0x56;

std::string status_name(std::uint32_t status);  // "NV_ERR_NOT_SUPPORTED (0x56)"

}  // namespace gpupart::rm
