#include "registry/job_reservations.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "registry/registry_layout.h"
#include "registry/slot_file.hpp"

namespace gpupart {
namespace {

constexpr std::size_t kMaxRecordBytes = 1u << 20;  // thousands of jobs; anything larger is not ours
constexpr const char* kWhat = "job reservations";
// 2: tpcs are TPC numbers. 1 (before gpupart used TPC numbers): launch-descriptor bits, read through the
// GPU's map when the reader knows it. A reader refuses any other: the record's meaning changed.
constexpr int kRecordVersion = 2;
constexpr int kBitsRecordVersion = 1;

// Root's, or the reader's own (a private test registry), and writable by nobody else.
bool trusted_owner(uid_t owner) { return owner == 0 || owner == ::geteuid(); }

void check_directory(const std::string& dir) {
    struct stat info {};
    if (::lstat(dir.c_str(), &info) != 0)
        throw RegistryError(fmt::format("{}: {}", one_line(dir), std::strerror(errno)));
    if (!S_ISDIR(info.st_mode))
        throw RegistryError(fmt::format("{}: is {}, not a directory: job reservations cannot be kept there", one_line(dir),
                                        file_kind(info.st_mode)));
    if (!trusted_owner(info.st_uid) || (info.st_mode & 022) != 0)
        throw RegistryError(fmt::format("{}: owned by uid {} with mode {:o}: only root may keep job reservations there",
                                        one_line(dir), info.st_uid, info.st_mode & 07777));
}

// Makes `dir` (mode 0755) for the records. In a shared root (/dev/shm, a 1777 registry) a user may have made
// a directory of that name first, to stop every placement: root moves such a squatter's directory aside
// (root may rename anything in a sticky directory) and makes its own, rather than fail every job.
void make_own_directory(const std::string& dir) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            throw RegistryError(fmt::format("cannot make {}: {}", one_line(dir), std::strerror(errno)));
        struct stat info {};
        if (::lstat(dir.c_str(), &info) != 0)
            throw RegistryError(fmt::format("{}: {}", one_line(dir), std::strerror(errno)));
        const bool squatted = !S_ISDIR(info.st_mode) || !trusted_owner(info.st_uid) || (info.st_mode & 022) != 0;
        if (!squatted || ::geteuid() != 0) break;  // check_directory below says why it cannot be used
        // A name nobody can guess and plant first, never replacing what is there (RENAME_NOREPLACE).
        std::random_device random;
        int moved = -1;
        for (int name = 0; name < 8 && moved != 0; ++name) {
            const std::string aside = fmt::format("{}.untrusted-uid{}-{:08x}{:08x}", dir, info.st_uid, random(), random());
            moved = ::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE);
            if (moved != 0 && errno != EEXIST) break;
        }
        if (moved != 0)
            throw RegistryError(fmt::format("{}: owned by uid {} with mode {:o}, and it cannot be moved aside: {}", one_line(dir),
                                            info.st_uid, info.st_mode & 07777, std::strerror(errno)));
    }
    check_directory(dir);
}

std::string record_path(const std::string& root, const std::string& uuid) {
    // The UUID comes from gpupart's own topology, but it names a file: never a path.
    if (uuid.empty() || uuid.find('/') != std::string::npos || uuid.starts_with("."))
        throw RegistryError(fmt::format("'{}' is not a GPU UUID", one_line(uuid)));
    return job_reservations_directory(root) + "/" + uuid + ".json";
}

std::vector<JobReservation> parse_record(const std::string& text, const std::string& path, const std::string& uuid,
                                         const TpcNumberings& numberings) {
    const auto bad = [&](std::string_view why) {
        return RegistryError(fmt::format("{}: {}: ignore it only after checking no job uses it", one_line(path), why));
    };
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) throw bad("not a job reservation record (JSON object)");
    if (!json.contains("version") || (json["version"] != kRecordVersion && json["version"] != kBitsRecordVersion))
        throw bad(fmt::format("not version {} of the record (another gpupart wrote it)", kRecordVersion));
    const TpcNumbering* from_bits = nullptr;
    if (json["version"] == kBitsRecordVersion) {
        const auto found = numberings.find(uuid);
        if (found == numberings.end())
            throw RegistryError(fmt::format("{}: written by a gpupart from before TPC numbers, in launch-descriptor bits: a gpupart "
                                            "command that reads this GPU's topology (`gpupart slurm jobs`) reads it", one_line(path)));
        from_bits = &found->second;
    }
    if (json.value("gpu", "") != uuid) throw bad("it is for another GPU");
    const auto jobs = json.find("jobs");
    if (jobs == json.end() || !jobs->is_array()) throw bad("no \"jobs\" list");
    std::vector<JobReservation> out;
    try {
        for (const auto& item : *jobs) {
            JobReservation job;
            job.job = item.at("job").get<std::string>();
            job.uid = item.at("uid").get<unsigned>();
            const auto tpcs = TpcMask::parse_hex(item.at("tpcs").get<std::string>());
            if (!tpcs) throw bad(fmt::format("job {}: tpcs is not a hex mask", one_line(job.job, 64)));
            job.tpcs = from_bits ? from_bits->to_numbers(*tpcs) : *tpcs;
            job.since_ns = item.at("since_realtime_ns").get<std::uint64_t>();
            job.allocated = item.value("allocated", 0);  // absent from records of an older gpupart
            for (const auto& holder : item.at("holders"))
                job.holders.push_back({holder.at("pid").get<int>(), holder.at("start_time").get<std::uint64_t>(),
                                       holder.at("step").get<std::string>()});
            out.push_back(std::move(job));
        }
    } catch (const nlohmann::json::exception& error) {
        throw bad(fmt::format("malformed ({})", error.what()));
    }
    return out;
}

std::vector<JobReservation> read_record(const std::string& root, const std::string& uuid, const TpcNumberings& numberings) {
    const std::string dir = job_reservations_directory(root);
    struct stat info {};
    if (::lstat(dir.c_str(), &info) != 0 && errno == ENOENT) return {};
    check_directory(dir);
    const std::string path = record_path(root, uuid);
    auto file = open_regular(path, O_RDONLY, Links::refuse, kWhat, true);
    if (!file) return {};
    if (!trusted_owner(file->owner) || (file->mode & 022) != 0)
        throw RegistryError(fmt::format("{}: owned by uid {} with mode {:o}: not a record gpupart wrote; ignored",
                                        one_line(path), file->owner, file->mode & 07777));
    return parse_record(read_bounded(file->fd.get(), kMaxRecordBytes, path, kWhat), path, uuid, numberings);
}

}  // namespace

std::string job_of_step(std::string_view step) {
    const auto dot = step.rfind('.');
    return std::string(dot == std::string_view::npos ? step : step.substr(0, dot));
}

std::string job_reservations_directory(const std::string& registry_root) {
    return registry_root == GPUPART_SHM_ROOT ? std::string(GPUPART_SHM_ROOT) + "/gpupart-jobs" : registry_root + "/jobs";
}

std::vector<JobReservation> read_job_reservations(const std::string& registry_root, const std::string& gpu_uuid,
                                                  const TpcNumberings& numberings) {
    return read_record(registry_root, gpu_uuid, numberings);
}

std::vector<std::string> job_reservation_gpus(const std::string& registry_root) {
    const std::string dir = job_reservations_directory(registry_root);
    struct stat info {};
    if (::lstat(dir.c_str(), &info) != 0 && errno == ENOENT) return {};
    check_directory(dir);
    std::vector<std::string> gpus;
    std::error_code error;
    for (const auto& item : std::filesystem::directory_iterator(dir, error)) {
        const std::string name = item.path().filename().string();
        if (name.starts_with("GPU-") && name.ends_with(".json")) gpus.push_back(name.substr(0, name.size() - 5));
    }
    std::sort(gpus.begin(), gpus.end());
    return gpus;
}

JobReservationsLock::JobReservationsLock(const std::string& registry_root, const std::string& gpu_uuid, const TpcNumberings& numberings,
                                         int timeout_ms)
    : root_(registry_root), uuid_(gpu_uuid), numberings_(numberings) {
    const std::string dir = job_reservations_directory(root_);
    make_own_directory(dir);
    const std::string path = dir + "/" + uuid_ + ".lock";
    record_path(root_, uuid_);  // refuses a UUID that is not a file name
    RegularFile lock = *open_regular(path, O_RDWR | O_CREAT, Links::refuse, "job reservations lock", false, 0600);
    if (!trusted_owner(lock.owner))
        throw RegistryError(fmt::format("{}: owned by uid {}: not gpupart's lock", one_line(path), lock.owner));
    struct flock request {};
    request.l_type = F_WRLCK;
    request.l_whence = SEEK_SET;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::fcntl(lock.fd.get(), F_OFD_SETLK, &request) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            throw RegistryError(fmt::format("{}: cannot lock: {}", one_line(path), std::strerror(errno)));
        if (std::chrono::steady_clock::now() > deadline)
            throw RegistryError(fmt::format("{}: another gpupart has held it for {} ms; try again", one_line(path), timeout_ms));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    fd_ = lock.fd.release();  // closing it drops the lock
}

JobReservationsLock::~JobReservationsLock() {
    if (fd_ >= 0) ::close(fd_);
}

std::vector<JobReservation> JobReservationsLock::read() const { return read_record(root_, uuid_, numberings_); }

void JobReservationsLock::write(const std::vector<JobReservation>& jobs) const {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const JobReservation& job : jobs) {
        nlohmann::ordered_json holders = nlohmann::ordered_json::array();
        for (const JobHolder& holder : job.holders)
            holders.push_back({{"pid", holder.pid}, {"start_time", holder.start_time}, {"step", holder.step}});
        list.push_back({{"job", job.job}, {"uid", job.uid}, {"tpcs", job.tpcs.to_hex()}, {"tpc_list", job.tpcs.to_list()},
                        {"allocated", job.allocated}, {"since_realtime_ns", job.since_ns}, {"holders", std::move(holders)}});
    }
    const nlohmann::ordered_json record{{"version", kRecordVersion}, {"gpu", uuid_}, {"jobs", std::move(list)}};
    std::string text;
    try {
        text = record.dump(1) + "\n";
    } catch (const nlohmann::json::exception& error) {  // a job name that is not UTF-8
        throw RegistryError(fmt::format("job reservations of {}: cannot be written: {}", one_line(uuid_), error.what()));
    }
    try {
        replace_file(record_path(root_, uuid_), text, 0644, kWhat);
    } catch (const RegistryError&) {
        throw;
    } catch (const UserError& error) {
        throw RegistryError(error.what());
    }
}

}  // namespace gpupart
