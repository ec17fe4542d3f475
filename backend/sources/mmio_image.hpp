#pragma once
// Where the MMIO reader's registers come from: a live BAR0 mapping (/sys/bus/pci/devices/<bdf>/resource0,
// root only, and refused on our test machines), or a register image file, so decoding is testable and a
// user can feed registers read elsewhere (`--mmio-image FILE`).
//
// Register image format, one entry a line ('#' starts a comment):
//   0x00022430 0x8                   offset value (32-bit, offsets 4-byte aligned)
//   0x00c10000-0x00c11ffc 0x0        every word from the first offset to the last holds the value
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sources/source_status.hpp"

namespace gpupart {

class RegisterSource {
public:
    virtual ~RegisterSource() = default;
    // nullopt when this source has no value there (an image that lacks it, an offset past the BAR).
    virtual std::optional<std::uint32_t> read32(std::uint32_t offset) const = 0;
    virtual std::string describe() const = 0;  // "register image FILE", "BAR0 of 0000:04:00.0"
};

class RegisterImage : public RegisterSource {
public:
    // Throws UserError "FILE line N: ..." for anything not in the format above, duplicates included.
    static RegisterImage parse(const std::string& text, const std::string& name);
    static RegisterImage load(const std::string& path);  // UserError when unreadable
    std::optional<std::uint32_t> read32(std::uint32_t offset) const override;
    std::string describe() const override { return "register image " + name_; }

private:
    struct Range {
        std::uint32_t first = 0;
        std::uint32_t last = 0;
        std::uint32_t value = 0;
    };
    std::string name_;
    std::map<std::uint32_t, std::uint32_t> words_;
    std::vector<Range> ranges_;
};

struct Bar0Open {
    SourceStatus status;                      // ok, absent (no such device), needs_root, refused (mmap said no)
    std::unique_ptr<RegisterSource> registers;
};

// Maps BAR0 of PCI device `bus_id` ("0000:04:00.0", NVML's "00000000:04:00.0" accepted) read-only.
Bar0Open open_bar0(const std::string& bus_id, const std::string& sysfs_root = "/sys");

// "00000000:04:00.0" -> "0000:04:00.0" (sysfs names the PCI domain with four digits), lower case.
std::string sysfs_bus_id(const std::string& bus_id);

}  // namespace gpupart
