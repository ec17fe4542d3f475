#pragma once
// RmTransport over the real device nodes (/dev/nvidiactl, /dev/nvidiaN). Needs no privilege where the
// nodes have the driver's default mode 0666; closing it (destructor) frees every RM object it made.
#include <string>

#include "sources/rm_transport.hpp"

namespace gpupart {

class RmDeviceTransport final : public RmTransport {
public:
    explicit RmDeviceTransport(std::string dev_root = "/dev");  // tests point it at an empty directory
    ~RmDeviceTransport() override;
    RmDeviceTransport(const RmDeviceTransport&) = delete;
    RmDeviceTransport& operator=(const RmDeviceTransport&) = delete;

    void open_control() override;
    void escape(std::uint8_t nr, std::span<std::byte> arg) override;
    void open_gpu_node(unsigned minor) override;
    void close_gpu_node() override;
    std::string control_path() const override;
    std::string gpu_node_path(unsigned minor) const override;

private:
    std::string dev_root_;
    int control_fd_ = -1;
    int gpu_fd_ = -1;
};

}  // namespace gpupart
