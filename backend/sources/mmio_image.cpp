#include "sources/mmio_image.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <regex>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

constexpr std::size_t kMaxImageBytes = 64u << 20;

std::uint32_t hex32(const std::string& text) { return static_cast<std::uint32_t>(std::stoul(text, nullptr, 16)); }

// A read-only mapping of a BAR; reads are single 32-bit volatile loads, as MMIO needs.
class Bar0Mapping : public RegisterSource {
public:
    Bar0Mapping(std::string name, const volatile std::uint32_t* base, std::size_t size)
        : name_(std::move(name)), base_(base), size_(size) {}
    ~Bar0Mapping() override { ::munmap(const_cast<std::uint32_t*>(base_), size_); }
    Bar0Mapping(const Bar0Mapping&) = delete;
    Bar0Mapping& operator=(const Bar0Mapping&) = delete;

    std::optional<std::uint32_t> read32(std::uint32_t offset) const override {
        if (offset % 4 != 0 || offset + 4u > size_) return std::nullopt;
        return base_[offset / 4];
    }
    std::string describe() const override { return name_; }

private:
    std::string name_;
    const volatile std::uint32_t* base_;
    std::size_t size_;
};

}  // namespace

RegisterImage RegisterImage::parse(const std::string& text, const std::string& name) {
    static const std::regex entry(R"(^\s*0x([0-9a-fA-F]{1,8})(?:-0x([0-9a-fA-F]{1,8}))?\s+0x([0-9a-fA-F]{1,8})\s*$)");
    RegisterImage image;
    image.name_ = name;
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        const std::string content = line.substr(0, line.find('#'));
        if (std::all_of(content.begin(), content.end(), [](unsigned char c) { return std::isspace(c); })) continue;
        std::smatch m;
        if (!std::regex_match(content, m, entry))
            throw UserError(fmt::format("{} line {}: expected '0xOFFSET 0xVALUE' or '0xFIRST-0xLAST 0xVALUE', got '{}'", name,
                                        number, line));
        const std::uint32_t first = hex32(m[1]);
        const std::uint32_t last = m[2].matched ? hex32(m[2]) : first;
        const std::uint32_t value = hex32(m[3]);
        if (first % 4 != 0 || last % 4 != 0 || last < first)
            throw UserError(fmt::format("{} line {}: offsets must be 4-byte aligned and ascending", name, number));
        const bool overlaps = std::any_of(image.ranges_.begin(), image.ranges_.end(),
                                          [&](const Range& r) { return first <= r.last && r.first <= last; }) ||
                              image.words_.lower_bound(first) != image.words_.upper_bound(last);
        if (overlaps) throw UserError(fmt::format("{} line {}: offset {:#x} is given twice", name, number, first));
        if (m[2].matched) image.ranges_.push_back(Range{first, last, value});
        else image.words_.emplace(first, value);
    }
    return image;
}

RegisterImage RegisterImage::load(const std::string& path) {
    // A path the user typed (--mmio-image): a FIFO or device is refused before any read, and the bound
    // (far above a full BAR0 dump as text) refuses /dev/zero-like input instead of filling memory.
    const std::string text = read_regular_file(path, kMaxImageBytes, Links::follow, "register image");
    return parse(text, path);
}

std::optional<std::uint32_t> RegisterImage::read32(std::uint32_t offset) const {
    if (const auto it = words_.find(offset); it != words_.end()) return it->second;
    for (const Range& range : ranges_)
        if (offset >= range.first && offset <= range.last && offset % 4 == 0) return range.value;
    return std::nullopt;
}

std::string sysfs_bus_id(const std::string& bus_id) {
    std::string out = bus_id;
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto colon = out.find(':');
    if (colon == 8 && out.starts_with("0000")) out.erase(0, 4);
    return out;
}

Bar0Open open_bar0(const std::string& bus_id, const std::string& sysfs_root) {
    Bar0Open open;
    const std::string path = fmt::format("{}/bus/pci/devices/{}/resource0", sysfs_root, sysfs_bus_id(bus_id));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        const SourceState state = error == ENOENT ? SourceState::absent
                                  : error == EACCES || error == EPERM ? SourceState::needs_root
                                                                      : SourceState::failed;
        open.status = SourceStatus{Source::mmio, state,
                                   fmt::format("{}: {}{}", path, std::strerror(error),
                                               state == SourceState::needs_root ? " (BAR0 can be mapped by root only)" : "")};
        return open;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0 || info.st_size < 4) {
        open.status = SourceStatus{Source::mmio, SourceState::failed, fmt::format("{}: no BAR0 size", path)};
        ::close(fd);
        return open;
    }
    const auto size = static_cast<std::size_t>(info.st_size);
    void* base = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    const int error = errno;
    ::close(fd);
    if (base == MAP_FAILED) {
        open.status = SourceStatus{Source::mmio, SourceState::refused, fmt::format("mmap of {} refused: {}", path, std::strerror(error))};
        return open;
    }
    open.registers = std::make_unique<Bar0Mapping>(fmt::format("BAR0 of {}", sysfs_bus_id(bus_id)),
                                                   static_cast<const volatile std::uint32_t*>(base), size);
    open.status = SourceStatus{Source::mmio, SourceState::ok, fmt::format("mapped {} ({} MiB)", path, size >> 20)};
    return open;
}

}  // namespace gpupart
