#pragma once
// One RM client of the NVIDIA driver, made with no privilege: the version query, the card list, then
// client -> device -> subdevice objects for one GPU, and controls on them (the RM object hierarchy of NVIDIA's open-gpu-kernel-modules).
// Packs the escape argument blocks of rm_abi.hpp; what the controls' parameters mean is rm_controls.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sources/rm_abi.hpp"
#include "sources/rm_transport.hpp"

namespace gpupart {

struct RmCard {
    std::string bus_id;  // "0000:00:06.0", as sysfs names the device
    std::uint16_t device_id = 0;
    std::uint32_t gpu_id = 0;  // the driver's id of the GPU
    unsigned minor = 0;        // N of /dev/nvidiaN
};

// The driver answered, but with an RM status other than NV_OK where the reader cannot go on
// (an object allocation). `status` is the RM status code.
class RmCallError : public std::runtime_error {
public:
    RmCallError(std::uint32_t status, std::string what) : std::runtime_error(std::move(what)), status_(status) {}
    std::uint32_t status() const { return status_; }

private:
    std::uint32_t status_;
};

// Pure decoders of the two non-control replies, tested on their own.
std::string decode_version_reply(std::span<const std::byte> reply);  // throws std::runtime_error if unrecognised
std::vector<RmCard> decode_card_info(std::span<const std::byte> entries);

class RmClient {
public:
    explicit RmClient(RmTransport& transport) : transport_(transport) {}
    ~RmClient();  // frees the client (and with it every object below it)
    RmClient(const RmClient&) = delete;
    RmClient& operator=(const RmClient&) = delete;

    std::string query_driver_version();  // NV_ESC_CHECK_VERSION_STR, cmd QUERY. Throws RmOsError.
    std::vector<RmCard> cards();          // NV_ESC_CARD_INFO: the GPUs the driver drives
    // Allocates client, device and subdevice for `card`. Throws RmOsError, RmCallError.
    void attach(const RmCard& card);
    // One control on the subdevice (or on the client for NV0000 controls); returns the RM status.
    // `params` must have the control's exact size; it is updated in place.
    std::uint32_t control(std::uint32_t cmd, std::span<std::byte> params);
    std::uint32_t client_control(std::uint32_t cmd, std::span<std::byte> params);

private:
    rm::Handle alloc(rm::Handle parent, std::uint32_t class_id, std::span<std::byte> params, const char* what);
    std::uint32_t control_on(rm::Handle object, std::uint32_t cmd, std::span<std::byte> params);

    RmTransport& transport_;
    rm::Handle client_ = 0;
    rm::Handle subdevice_ = 0;
};

}  // namespace gpupart
