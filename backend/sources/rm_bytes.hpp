#pragma once
// Little-endian fields at byte offsets of a control's parameter block, bounds-checked: a reply too
// short for a field is a decoding error, never a read past the end.
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace gpupart::rm {

class DecodeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

template <typename T>
T read_field(std::span<const std::byte> bytes, std::size_t offset) {
    if (offset + sizeof(T) > bytes.size())
        throw DecodeError("reply of " + std::to_string(bytes.size()) + " bytes has no field at offset " + std::to_string(offset));
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

template <typename T>
void write_field(std::span<std::byte> bytes, std::size_t offset, T value) {
    if (offset + sizeof(T) > bytes.size())
        throw std::logic_error("parameter block of " + std::to_string(bytes.size()) + " bytes has no field at offset " +
                               std::to_string(offset));
    std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

inline std::uint32_t u32_at(std::span<const std::byte> bytes, std::size_t offset) { return read_field<std::uint32_t>(bytes, offset); }
inline std::uint16_t u16_at(std::span<const std::byte> bytes, std::size_t offset) { return read_field<std::uint16_t>(bytes, offset); }

}  // namespace gpupart::rm
