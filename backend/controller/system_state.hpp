#pragma once
// Everything the controller's rules look at, gathered once: the GPU's topology, the live partitioned
// processes, MPS, and who is asking. Plain data, so every rule is a pure function tested without
// processes (the gathering itself is tested with real ones).
#include <optional>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "platform/mps_log.hpp"
#include "registry/graph_status.hpp"
#include "registry/job_reservations.hpp"
#include "registry/registry.hpp"
#include "smlp/smlp_file.hpp"

namespace gpupart {

struct ProcessState {
    int pid = 0;
    std::uint64_t start_time = 0;
    unsigned uid = 0;
    std::string command;
    std::string job;           // the scheduler job step it belongs to ("slurm:12.0"; slot header.job), "" if none
    std::string claimed_job;   // a job step it names but is not of (another user's job: trust_job_claims); job is ""
    bool job_step_gone = false;  // its job step ended (its slurmstepd is gone) while it runs on: trust_job_claims
    bool partitioned = false;  // has a mask on this state's GPU (else: may use every TPC of it)
    TpcMask mask;              // requested (control block) on this state's GPU
    std::vector<std::string> gpus;  // every GPU (UUID) it has a mask for or a context on; empty: none yet
    std::uint64_t generation = 0;
    Liveness liveness = Liveness::alive;
    GraphStatus graphs;        // what its CUDA graph execs carry (the shim's counts)
    // The masks the program chose itself (libgpupart.so), for every GPU it is on: they apply under `mask`
    // (registry/app_masks.hpp, effective_tpcs). Not in use: the program never called the API.
    SlotAppMasks app;

    // What the shim says, on this state's GPU: the one view every front end shows (CLI, GUI, top).
    std::string shim_version;
    std::string start_rule;    // where its start mask came from ("" none)
    bool simulated = false;    // a demo worker, not a CUDA process
    bool writer_died = false;  // a gpupart died mid-change; the mask shown is the one before it
    bool has_context = false;  // the shim saw a context on this GPU
    int shim_code = 0;         // enum gpupart_shim_state: this GPU's entry, else the process's
    std::string shim_word;     // one word: waiting, active, pending, passthru, refused, bad env, unconfined, unknown gpu
    std::string shim_sentence; // one sentence, for the status line and tooltips
    bool shim_problem = false; // the shim cannot apply (all of) what was asked on this GPU
    std::string applied;       // what the shim applies here: "-", "(next launch)", "all", "(publishing)" or TPCs
    bool pending = false;      // a change not applied yet (at the next launch on this GPU)
    unsigned descriptor_version = 0;
    std::uint64_t launches = 0;         // on this GPU
    std::uint64_t masked_launches = 0;  // on this GPU
    std::uint64_t launches_all_gpus = 0;
    std::uint64_t last_launch_ns = 0;
    std::uint64_t errors = 0;
    std::uint64_t refused_masks = 0;
    std::uint64_t graph_launches = 0;
    // What a launch rate counts: kernel launches on every GPU plus CUDA graph replays (a replay of a graph
    // of N kernels is one), so a process that only replays graphs is not shown as idle.
    std::uint64_t submissions() const { return launches_all_gpus + graph_launches; }
    std::uint64_t applied_ns = 0;  // when the shim adopted the generation it applies here (realtime; 0: never)
    std::uint64_t written_ns = 0;  // when the control block was last written (realtime)
    int writer_pid = 0;            // who wrote it (the process itself at registration, else a gpupart)
};

// A slot that could not be read (another layout, permission, garbage): the TPCs its process uses are
// unknown, so no TPC can be called idle or free with certainty while it is there.
struct UnreadableSlot {
    std::string path;
    std::string problem;    // one line, from the registry
    std::optional<int> pid; // from the file name <pid>-<start>.slot; nullopt when that is not one
};

// A process the driver or NVML says uses the GPU, with no slot in the registry: no gpupart mask holds it,
// so it runs on every TPC, over every partition (a job that asked no TPCs, a program started without
// `gpupart run`).
struct UnconfinedProcess {
    int pid = 0;
    std::optional<int> uid;
    std::string command;
};

struct SystemState {
    Gpu gpu;
    std::string gpu_uuid;                 // the registry's name for `gpu` (gpu_key)
    // Registered, alive, and on this GPU: with a mask for it or a context on it, or on no GPU yet (a
    // process that has not launched may still open any GPU, unconfined). Processes on other GPUs only
    // are not here: their TPCs are another board's.
    std::vector<ProcessState> processes;
    // Registered, alive, on other GPUs only: not this GPU's (no TPC of it, no finding), but a change may
    // give one a mask here too (`set --gpu`), after which it is.
    std::vector<ProcessState> elsewhere;
    std::vector<UnreadableSlot> unreadable;  // those of live processes, or of a process the name does not tell
    std::vector<UnconfinedProcess> unconfined;  // live, on this GPU by the driver's or NVML's word, not registered
    // The TPCs scheduler jobs hold on this GPU (registry/job_reservations.hpp); read by gather_state from a
    // Registry only. jobs_problem: why the record could not be read ("" when it could, or there is none).
    std::vector<JobReservation> jobs;
    std::string jobs_problem;
    bool mps_running = false;
    bool mps_static_partitioning = false;
    std::string mps_pipe_directory;               // of the daemon serving this GPU (asked for its clients)
    std::vector<int> mps_server_pids;             // its servers (get_server_list)
    std::vector<MpsFatalError> mps_fatal_errors;  // of the running MPS server, oldest first
    std::string mps_log_directory;                // where they were looked for
    std::string mps_log_problem;                  // why the MPS logs could not be read; empty when they were
    unsigned caller_uid = 0;
    bool caller_admin = false;  // root, or in the registry's admin group
    // SMLP components of the registry (every GPU's: each says its own), read lock-free with the processes;
    // empty from the overload that takes registry entries (it has no registry to list them from).
    std::vector<SmlpEntry> smlp;
    std::string smlp_problem;          // why they could not be listed (one line); empty when they were
    std::uint64_t smlp_read_ns = 0;    // when (CLOCK_REALTIME): holding and waiting times are counted to it
};

// Reads the registry (processes and SMLP components) and MPS. `admin_group` names the admin group ("gpupart").
SystemState gather_state(const Registry& registry, const Gpu& gpu, const std::string& admin_group = "gpupart");
// The same from a registry already listed (Registry::list): one read serves every GPU of a machine.
SystemState gather_state(const std::vector<RegistryEntry>& entries, const Gpu& gpu, const std::string& admin_group = "gpupart");

// Fills state's jobs (or jobs_problem) from the job reservations under `registry_root`, swept of steps that
// are gone, and checks the processes' jobs against them (trust_job_claims): what gather_state(Registry)
// does, for front ends that list the registry once for every GPU (the exporter).
void gather_jobs(SystemState& state, const std::string& registry_root, const std::vector<RegistryEntry>& entries);

// Fills state's mps_fatal_errors (of the servers `server_pids`), mps_log_directory and mps_log_problem from
// the MPS logs in `log_directory`: what gather_state does when MPS runs, for front ends that read no other
// state (`list`).
void gather_mps_log(SystemState& state, const std::string& log_directory, const std::vector<int>& server_pids);

const ProcessState* find_process(const SystemState& state, int pid);

// Fills what the shim says about `record` on GPU `uuid` (ProcessState's shim fields): what gather_state
// does for every process, for front ends and tests that hold a slot record of their own.
void describe_process_on_gpu(const SlotRecord& record, const std::string& uuid, ProcessState& process);
bool in_group(const std::string& group);  // the calling process is a member (primary or supplementary)

}  // namespace gpupart
