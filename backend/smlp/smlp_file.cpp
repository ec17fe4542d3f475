// Finding, opening and reading SMLP component files; what their values mean is smlp_queues.cpp's.
#include "smlp/smlp_file.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "platform/user_names.hpp"
#include "registry/pread_seqlock.hpp"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"

namespace gpupart {
namespace {

constexpr int kComponentReadTries = 64;
constexpr std::size_t kComponentSeqOffset = offsetof(gpupart_smlp_file, header) + offsetof(gpupart_smlp_component, seq);

void pread_component(int fd, void* out, std::size_t size, std::size_t offset, const std::string& path) {
    pread_exact(fd, out, size, offset, path, "component");
}

std::vector<std::string> entry_names(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& item : std::filesystem::directory_iterator(dir, error)) names.push_back(item.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

void list_components_in(const std::string& dir, unsigned uid, std::vector<SmlpEntry>& entries) {
    for (const std::string& name : entry_names(dir)) {
        if (!name.ends_with(GPUPART_SMLP_SUFFIX) || name.starts_with(".")) continue;  // .name.tmp: one being made
        SmlpEntry entry{dir + "/" + name, std::nullopt, ""};
        try {
            entry.component = read_smlp_component(entry.path, uid);
        } catch (const RegistryError& problem) {
            entry.problem = one_line(problem.what());
        }
        entries.push_back(std::move(entry));
    }
}

}  // namespace

std::uint64_t realtime_now_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

SmlpComponent read_smlp_component(const std::string& path, unsigned dir_owner) {
    // O_NONBLOCK: a FIFO planted under a component's name cannot block the open; fstat then refuses it.
    const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (raw < 0) throw RegistryError(fmt::format("{}: cannot open: {}", one_line(path), std::strerror(errno)));
    const FileDescriptor fd(raw);
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode))
        throw RegistryError(fmt::format("{}: is {}, not an SMLP component file: ignored", one_line(path), file_kind(info.st_mode)));
    if (info.st_uid != dir_owner)
        throw RegistryError(fmt::format("{}: belongs to {} but lies in the directory of {}: ignored", one_line(path),
                                        user_name(info.st_uid), user_name(dir_owner)));
    const auto size_problem = [&] {
        return RegistryError(fmt::format("{}: not an SMLP component file (size {}, expected {}): truncated or not a component",
                                         one_line(path), static_cast<long long>(info.st_size), sizeof(gpupart_smlp_file)));
    };
    if (info.st_size < static_cast<off_t>(offsetof(gpupart_smlp_component, state))) throw size_problem();
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    // Magic and version first: a component of another layout is named as such, not as garbage. The magic
    // "gpsmlp" is 7 bytes with its NUL (smlp_layout.h's "8 bytes" is the field): those 7 are compared.
    char magic[8];
    std::uint32_t version = 0;
    pread_component(fd.get(), magic, sizeof magic, 0, path);
    pread_component(fd.get(), &version, sizeof version, offsetof(gpupart_smlp_component, layout_version), path);
    if (std::memcmp(magic, GPUPART_SMLP_MAGIC, sizeof GPUPART_SMLP_MAGIC) != 0)
        throw RegistryError(fmt::format("{}: not an SMLP component file (bad magic)", one_line(path)));
    if (version != GPUPART_REGISTRY_LAYOUT_VERSION)
        throw RegistryError(fmt::format("{}: registry layout version {} is not the {} this gpupart reads; use the gpupart "
                                        "that matches the library of its processes", one_line(path), version,
                                        GPUPART_REGISTRY_LAYOUT_VERSION));
    if (info.st_size != static_cast<off_t>(sizeof(gpupart_smlp_file))) throw size_problem();

    // The seqlock through pread (pread_seqlock.hpp): one number, in the component's header.
    auto file = std::make_unique<gpupart_smlp_file>();
    const bool whole = pread_seqlock<std::uint32_t>(
        kComponentReadTries,
        [&](std::uint32_t& seq) { pread_component(fd.get(), &seq, sizeof seq, kComponentSeqOffset, path); },
        [&] { pread_component(fd.get(), file.get(), sizeof *file, 0, path); }, seq_unchanged);
    return smlp_view(*file, path, info.st_uid, !whole);
}

std::vector<SmlpEntry> list_smlp_components(const std::string& root) {
    std::vector<SmlpEntry> entries;
    if (!Registry(root).check_root()) return entries;
    for (const std::string& name : entry_names(root)) {
        const std::string path = root + "/" + name;
        std::uint32_t uid = 0;
        char why[512] = "";
        const int verdict = gpupart_user_dir_check(root.c_str(), name.c_str(), &uid, why, sizeof why);
        if (verdict == 0) {
            list_components_in(path, uid, entries);
        } else if (verdict != -ENOENT) {
            // An untrusted user directory: its components are never read, only named (the slots' listing
            // says why the directory is not trusted).
            std::error_code error;
            if (std::filesystem::is_directory(std::filesystem::symlink_status(path, error)))
                for (const std::string& inside : entry_names(path))
                    if (inside.ends_with(GPUPART_SMLP_SUFFIX))
                        entries.push_back({path + "/" + inside, std::nullopt, one_line(why[0] ? why : path)});
        } else if (name.ends_with(GPUPART_SMLP_SUFFIX)) {
            entries.push_back({path, std::nullopt, fmt::format("{}: an SMLP component outside any user directory: ignored", one_line(path))});
        }
    }
    std::sort(entries.begin(), entries.end(), [](const SmlpEntry& a, const SmlpEntry& b) {
        const std::string name_a = a.component ? a.component->name : "";
        const std::string name_b = b.component ? b.component->name : "";
        return name_a != name_b ? name_a < name_b : a.path < b.path;
    });
    return entries;
}

}  // namespace gpupart
