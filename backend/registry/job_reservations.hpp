#pragma once
// The TPCs each scheduler job holds on a GPU: what the Slurm plugin placed, so that a job
// placed later, and a live change of a job's process, never get TPCs another job holds. One record per
// GPU, "<registry root>/jobs/GPU-<uuid>.json" ("/dev/shm/gpupart-jobs/..." under the /dev/shm root),
// written only by root (the plugin's helper runs in slurmstepd as root) and read by every front end.
//  - Writers hold an OFD write lock on "GPU-<uuid>.lock" beside it (the kernel drops the lock of a
//    writer that dies) for the whole read-change-write, so concurrent job starts serialise, and replace
//    the record whole (temporary file, then rename): a reader never sees half of one.
//  - Readers trust the directory and the files only when they are owned by root (or by the reader
//    itself: a test's private registry) and nobody else may write them.
// A job's record names the steps using it (their slurmstepd, by pid and start time): a record none of
// whose holders is alive, and whose job has no live process, is stale (a killed slurmstepd) and is swept.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tpc_mask.hpp"
#include "registry/slot_numbering.hpp"

namespace gpupart {

// A step using a job's TPCs: the slurmstepd that placed or joined them.
struct JobHolder {
    int pid = 0;
    std::uint64_t start_time = 0;
    std::string step;  // "slurm:<job>.<step>", as the job's processes carry it in their slots
    bool operator==(const JobHolder&) const = default;
};

struct JobReservation {
    std::string job;   // "slurm:<job id>" (job_of_step of its steps' names)
    unsigned uid = 0;  // the job's user
    TpcMask tpcs;
    int allocated = 0;           // the TPCs Slurm gave the job here (0: not recorded, an older gpupart placed it)
    std::uint64_t since_ns = 0;  // realtime of the placement
    std::vector<JobHolder> holders;
    bool operator==(const JobReservation&) const = default;
};

// "slurm:12.0" -> "slurm:12": the job a step (a slot's header.job) belongs to; a name without a step
// ('.') is its own job. "" stays "".
std::string job_of_step(std::string_view step);

// Where a registry root keeps the records ("<root>/jobs"; "/dev/shm/gpupart-jobs" for /dev/shm).
std::string job_reservations_directory(const std::string& registry_root);

// The record of GPU `gpu_uuid` ("GPU-..."); empty when there is none. Throws RegistryError (one line)
// when the directory or file must not be trusted or the record is malformed.
// A record written before gpupart used TPC numbers (launch-descriptor bits) is read through `numberings`
// (the GPU's map), or refused in one line without it.
std::vector<JobReservation> read_job_reservations(const std::string& registry_root, const std::string& gpu_uuid,
                                                  const TpcNumberings& numberings = {});

// The GPUs ("GPU-...") that have a record under the registry root, sorted; none when there is no directory.
std::vector<std::string> job_reservation_gpus(const std::string& registry_root);

// The GPU's record under its lock, for one read-change-write. Makes the directory (mode 0755) when
// missing. Throws RegistryError when the lock is not had within `timeout_ms` or the directory is unsafe.
class JobReservationsLock {
public:
    JobReservationsLock(const std::string& registry_root, const std::string& gpu_uuid, const TpcNumberings& numberings = {},
                        int timeout_ms = 10000);
    JobReservationsLock(const JobReservationsLock&) = delete;
    JobReservationsLock& operator=(const JobReservationsLock&) = delete;
    ~JobReservationsLock();

    std::vector<JobReservation> read() const;
    void write(const std::vector<JobReservation>& jobs) const;  // replaces the record whole

private:
    std::string root_;
    std::string uuid_;
    TpcNumberings numberings_;
    int fd_ = -1;
};

}  // namespace gpupart
