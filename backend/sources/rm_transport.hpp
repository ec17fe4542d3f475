#pragma once
// The only place the RM-control reader touches the operating system: open the driver's device nodes
// and issue escapes on /dev/nvidiactl. An interface, so the reader, its decoders and the model
// builder are tested on machines with no GPU against recorded replies (tests/unit/rm_fixture_transport).
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace gpupart {

// An OS-level failure: a node that cannot be opened, an ioctl that returned -1. `error` is the errno.
class RmOsError : public std::runtime_error {
public:
    RmOsError(int error, std::string what) : std::runtime_error(std::move(what)), error_(error) {}
    int error() const { return error_; }

private:
    int error_;
};

class RmTransport {
public:
    virtual ~RmTransport() = default;
    // Opens the control node (/dev/nvidiactl). Throws RmOsError.
    virtual void open_control() = 0;
    // ioctl(control, _IOWR('F', nr, arg.size()), arg.data()). The driver copies `arg` in and back out
    // and reports RM failures inside it, so only OS failures throw (RmOsError with the errno).
    virtual void escape(std::uint8_t nr, std::span<std::byte> arg) = 0;
    // Opens /dev/nvidia<minor> and holds it until close_gpu_node(): the driver allocates a device
    // object only for a process that has its GPU's node open (measured with driver 580). Throws RmOsError.
    virtual void open_gpu_node(unsigned minor) = 0;
    virtual void close_gpu_node() = 0;
    // "/dev/nvidiactl": the node the messages name.
    virtual std::string control_path() const = 0;
    virtual std::string gpu_node_path(unsigned minor) const = 0;
};

}  // namespace gpupart
