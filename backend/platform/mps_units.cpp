#include "platform/mps_units.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/mps_directories_check.hpp"
#include "platform/mps_log.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

// A UUID names a path component: letters, digits and '-' only (GPU-..., MIG-...), never "." or "..".
bool uuid_like(const std::string& uuid) {
    return !uuid.empty() && uuid.size() <= 96 && uuid.front() != '-' &&
           std::all_of(uuid.begin(), uuid.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
           });
}

// Whether `path` is a unit's pipe directory; `why` says what is wrong when it is not.
enum class PipeCheck { missing, trusted, untrusted };
PipeCheck check_pipe_directory(const std::string& path, uid_t owner, std::string& why) {
    struct stat st {};
    // lstat: a symlink planted in its place is not followed to somebody's directory.
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return PipeCheck::missing;
    const auto problem = mps_directory_problem(path, owner);
    if (!problem) return PipeCheck::trusted;
    why = *problem;
    return PipeCheck::untrusted;
}

}  // namespace

MpsDirectories mps_directories(const std::string& uuid, const MpsUnitRoots& roots) {
    if (const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); pipe != nullptr && pipe[0] != '\0')
        return {pipe, mps_log_directory(), ""};
    if (uuid_like(uuid)) {
        const std::string pipe = roots.pipe + "/" + uuid;
        std::string why;
        switch (check_pipe_directory(pipe, roots.owner, why)) {
        case PipeCheck::trusted: {
            // A log directory chosen explicitly still wins: the user reads the logs where they put them.
            const char* log = std::getenv("CUDA_MPS_LOG_DIRECTORY");
            return {pipe, log != nullptr && log[0] != '\0' ? log : roots.log + "/" + uuid,
                    fmt::format("gpupart-mps@{}.service", uuid)};
        }
        case PipeCheck::untrusted:
            throw UserError(one_line(fmt::format("{}: not used as the MPS pipe directory of gpupart-mps@{}.service; "
                                                 "remove it or restart that unit", why, uuid)));
        case PipeCheck::missing: break;
        }
    }
    return {mps_pipe_directory(), mps_log_directory(), ""};
}

std::vector<std::string> mps_unit_gpus(const MpsUnitRoots& roots) {
    std::vector<std::string> uuids;
    DIR* dir = ::opendir(roots.pipe.c_str());
    if (dir == nullptr) return uuids;  // no unit has run since boot
    while (const dirent* entry = ::readdir(dir)) {
        if (uuid_like(entry->d_name)) uuids.emplace_back(entry->d_name);
    }
    ::closedir(dir);
    std::sort(uuids.begin(), uuids.end());
    return uuids;
}

std::vector<MpsUnitStatus> mps_unit_status(const MpsUnitRoots& roots) {
    std::vector<MpsUnitStatus> units;
    if (const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); pipe != nullptr && pipe[0] != '\0') return units;
    for (const std::string& uuid : mps_unit_gpus(roots)) {
        MpsUnitStatus unit{uuid, fmt::format("gpupart-mps@{}.service", uuid), {}};
        try {
            unit.state = mps_status(mps_directories(uuid, roots).pipe);
        } catch (const UserError& error) {
            unit.state.pipe_directory = roots.pipe + "/" + uuid;
            unit.state.detail = error.what();
        }
        units.push_back(std::move(unit));
    }
    return units;
}

}  // namespace gpupart
