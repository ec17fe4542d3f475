#include "sources/rm_client.hpp"

#include <cstring>

#include <fmt/format.h>

namespace gpupart {
namespace {

template <typename T>
std::span<std::byte> bytes_of(T& value) {
    return std::as_writable_bytes(std::span<T, 1>(&value, 1));
}

std::uint64_t pointer_of(std::span<std::byte> params) {
    return params.empty() ? 0 : static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(params.data()));
}

// NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 (32 bytes): gpuId in @0, deviceInstance out @8.
constexpr std::uint32_t kGetIdInfoV2 = 0x205;
constexpr std::size_t kIdInfoSize = 32;
constexpr std::size_t kIdInfoDeviceInstance = 8;

}  // namespace

std::string decode_version_reply(std::span<const std::byte> reply) {
    rm::VersionArgs args;
    if (reply.size() != sizeof(args)) throw std::runtime_error("version reply has the wrong size");
    std::memcpy(&args, reply.data(), sizeof(args));
    if (args.reply != rm::kVersionReplyRecognized)
        throw std::runtime_error("the driver did not recognise the version query");
    const std::size_t length = strnlen(args.version, sizeof(args.version));
    if (length == 0 || length == sizeof(args.version)) throw std::runtime_error("the driver's version string is empty or unterminated");
    return std::string(args.version, length);
}

std::vector<RmCard> decode_card_info(std::span<const std::byte> entries) {
    std::vector<RmCard> cards;
    for (std::size_t at = 0; at + sizeof(rm::CardInfoEntry) <= entries.size(); at += sizeof(rm::CardInfoEntry)) {
        rm::CardInfoEntry entry;
        std::memcpy(&entry, entries.data() + at, sizeof(entry));
        if (!entry.valid) continue;
        cards.push_back(RmCard{fmt::format("{:04x}:{:02x}:{:02x}.{:x}", entry.pci_domain, entry.pci_bus, entry.pci_slot,
                                           entry.pci_function),
                               entry.device_id, entry.gpu_id, entry.minor_number});
    }
    return cards;
}

RmClient::~RmClient() {
    if (client_ == 0) return;
    rm::FreeArgs args{client_, 0, client_, 0};
    try {
        transport_.escape(rm::kEscRmFree, bytes_of(args));
    } catch (const RmOsError&) {
        // Closing the control node frees the client as well; nothing is left behind.
    }
}

std::string RmClient::query_driver_version() {
    transport_.open_control();
    rm::VersionArgs args;
    args.cmd = rm::kVersionCmdQuery;
    transport_.escape(rm::kEscCheckVersionStr, bytes_of(args));
    return decode_version_reply(std::as_bytes(std::span<rm::VersionArgs, 1>(&args, 1)));
}

std::vector<RmCard> RmClient::cards() {
    std::vector<rm::CardInfoEntry> entries(rm::kCardInfoEntries);
    transport_.escape(rm::kEscCardInfo, std::as_writable_bytes(std::span(entries)));
    return decode_card_info(std::as_bytes(std::span(entries)));
}

rm::Handle RmClient::alloc(rm::Handle parent, std::uint32_t class_id, std::span<std::byte> params, const char* what) {
    rm::AllocArgs args{client_, parent, 0, class_id, pointer_of(params), static_cast<std::uint32_t>(params.size()), 0};
    transport_.escape(rm::kEscRmAlloc, bytes_of(args));
    if (args.status != rm::kOk)
        throw RmCallError(args.status, fmt::format("{} allocation: {}", what, rm::status_name(args.status)));
    return args.object_new;
}

void RmClient::attach(const RmCard& card) {
    client_ = alloc(0, rm::kClassRootClient, {}, "RM client");

    std::byte id_info[kIdInfoSize] = {};
    std::memcpy(id_info, &card.gpu_id, sizeof(card.gpu_id));
    if (const auto status = client_control(kGetIdInfoV2, id_info); status != rm::kOk)
        throw RmCallError(status, fmt::format("GPU_GET_ID_INFO_V2: {}", rm::status_name(status)));
    std::uint32_t device_instance = 0;
    std::memcpy(&device_instance, id_info + kIdInfoDeviceInstance, sizeof(device_instance));

    // The driver checks that this process has the GPU's node open while the device object is made.
    transport_.open_gpu_node(card.minor);
    std::byte device_params[rm::kDeviceAllocSize] = {};
    std::memcpy(device_params, &device_instance, sizeof(device_instance));
    std::memcpy(device_params + rm::kDeviceAllocClientShareOffset, &client_, sizeof(client_));
    rm::Handle device = 0;
    try {
        device = alloc(client_, rm::kClassDevice, device_params, "NV01_DEVICE_0");
    } catch (...) {
        transport_.close_gpu_node();
        throw;
    }
    transport_.close_gpu_node();  // verified: controls keep working once the device exists
    std::byte subdevice_params[rm::kSubdeviceAllocSize] = {};
    subdevice_ = alloc(device, rm::kClassSubdevice, subdevice_params, "NV20_SUBDEVICE_0");
}

std::uint32_t RmClient::control_on(rm::Handle object, std::uint32_t cmd, std::span<std::byte> params) {
    rm::ControlArgs args{client_, object, cmd, 0, pointer_of(params), static_cast<std::uint32_t>(params.size()), 0};
    transport_.escape(rm::kEscRmControl, bytes_of(args));
    return args.status;
}

std::uint32_t RmClient::control(std::uint32_t cmd, std::span<std::byte> params) {
    if (subdevice_ == 0) throw std::logic_error("RmClient::control before attach");
    return control_on(subdevice_, cmd, params);
}

std::uint32_t RmClient::client_control(std::uint32_t cmd, std::span<std::byte> params) {
    return control_on(client_, cmd, params);
}

}  // namespace gpupart
