// Identity controls: the GPU's UUID and name as the driver gives them to NVML (branch 580 layouts of
// NVIDIA's open-gpu-kernel-modules headers). A partition command needs the UUID and nothing else NVML
// offers, and NVML's start costs a CLI tens of milliseconds; one control on the client the reader already
// holds costs microseconds.
#include <cstring>

#include <fmt/format.h>

#include "sources/rm_controls.hpp"

namespace gpupart::rm580 {
namespace {

// GPU_GET_GID_INFO: {index @0; flags @4 (FORMAT 1:0 = 0 ASCII, TYPE 2:2 = 0 SHA-1); length @8; data[256] @12}.
constexpr std::size_t kGidLengthAt = 8;
constexpr std::size_t kGidDataAt = 12;
constexpr std::size_t kGidMax = 256;
// GPU_GET_NAME_STRING: {gpuNameStringFlags @0 (0 ASCII); ascii[128] @4 (a union with unicode[64])}.
constexpr std::size_t kNameAt = 4;
constexpr std::size_t kNameMax = 128;

bool hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The text of a NUL-terminated field of at most `max` bytes at `at`; DecodeError when it has no end.
std::string text_at(Reply reply, std::size_t at, std::size_t max, const char* what) {
    if (at + max > reply.size()) throw rm::DecodeError(fmt::format("reply of {} bytes has no {}", reply.size(), what));
    const char* begin = reinterpret_cast<const char*>(reply.data() + at);
    const std::size_t length = ::strnlen(begin, max);
    if (length == max) throw rm::DecodeError(fmt::format("{} of {} bytes has no end", what, max));
    return std::string(begin, length);
}

}  // namespace

Params gid_request() { return request(kGpuGetGidInfo); }  // index 0, flags 0: the SHA-1 GID as text

Params name_request() { return request(kGpuGetNameString); }  // flags 0: ASCII

std::string decode_gid(Reply reply) {
    const std::uint32_t length = rm::u32_at(reply, kGidLengthAt);
    if (length > kGidMax) throw rm::DecodeError(fmt::format("GID of {} bytes (at most {})", length, kGidMax));
    const std::string gid = text_at(reply, kGidDataAt, kGidMax, "GID");
    // "GPU-" and the 8-4-4-4-12 hex groups of a UUID: anything else is not the UUID CUDA and NVML print.
    bool shaped = gid.size() == 40 && gid.starts_with("GPU-");
    for (std::size_t i = 4; shaped && i < gid.size(); ++i) {
        const bool dash = i == 12 || i == 17 || i == 22 || i == 27;
        shaped = dash ? gid[i] == '-' : hex_digit(gid[i]);
    }
    if (!shaped) throw rm::DecodeError(fmt::format("GID of {} characters is not a GPU UUID", gid.size()));
    return gid;
}

std::string decode_name(Reply reply) {
    const std::string name = text_at(reply, kNameAt, kNameMax, "name");
    if (name.empty()) throw rm::DecodeError("empty name");
    for (const char c : name)
        if (c < 0x20 || c > 0x7e) throw rm::DecodeError("name with a character that is not printable ASCII");
    return name;
}

}  // namespace gpupart::rm580
