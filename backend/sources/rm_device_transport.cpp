#include "sources/rm_device_transport.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sources/rm_abi.hpp"

namespace gpupart {
namespace {

int open_node(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        throw RmOsError(error, fmt::format("{}: {}", path, std::strerror(error)));
    }
    return fd;
}

}  // namespace

RmDeviceTransport::RmDeviceTransport(std::string dev_root) : dev_root_(std::move(dev_root)) {}

RmDeviceTransport::~RmDeviceTransport() {
    close_gpu_node();
    if (control_fd_ >= 0) ::close(control_fd_);  // closing the control node frees the RM client and its objects
}

void RmDeviceTransport::open_control() {
    if (control_fd_ < 0) control_fd_ = open_node(control_path());
}

void RmDeviceTransport::escape(std::uint8_t nr, std::span<std::byte> arg) {
    if (control_fd_ < 0) throw RmOsError(EBADF, control_path() + ": not open");
    if (arg.size() >= (1u << 14)) throw RmOsError(EINVAL, fmt::format("escape 0x{:x}: {} bytes is too large", nr, arg.size()));
    int rc = 0;
    do {
        rc = ::ioctl(control_fd_, rm::ioctl_request(nr, arg.size()), arg.data());
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        const int error = errno;
        throw RmOsError(error, fmt::format("{}: ioctl escape 0x{:x}: {}", control_path(), nr, std::strerror(error)));
    }
}

void RmDeviceTransport::open_gpu_node(unsigned minor) {
    close_gpu_node();
    gpu_fd_ = open_node(gpu_node_path(minor));
}

void RmDeviceTransport::close_gpu_node() {
    if (gpu_fd_ >= 0) ::close(gpu_fd_);
    gpu_fd_ = -1;
}

std::string RmDeviceTransport::control_path() const { return dev_root_ + "/nvidiactl"; }
std::string RmDeviceTransport::gpu_node_path(unsigned minor) const { return fmt::format("{}/nvidia{}", dev_root_, minor); }

}  // namespace gpupart
