// gpupart-demo-worker: a simulated partitioned process for machines with no GPU (the demo of the GUI and
// the terminal view, and tests). It registers in the real registry exactly as the shim does, then
// "launches" a kernel at a steady rate: it follows its slot's mask the way the shim does (adopting a
// mask only when it has a real TPC), counts launches and publishes what it applies. It says everywhere
// that it is simulated (command line and shim version), and it never touches a GPU.
//   gpupart-demo-worker NAME TPCS_HEX REAL_TPCS_HEX [SECONDS] [LAUNCHES_PER_SECOND]
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <sys/prctl.h>
#include <unistd.h>

#include "registry/registry_layout.h"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"
#include "registry/slot_guard.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4 || argc > 6) {
        std::fprintf(stderr, "usage: gpupart-demo-worker NAME TPCS_HEX REAL_TPCS_HEX [SECONDS] [LAUNCHES_PER_SECOND]\n");
        return 2;
    }
    gpupart_control initial{};
    if (gpupart_parse_hex_mask(argv[2], initial.allowed) != 0 || gpupart_parse_hex_mask(argv[3], initial.real_tpcs) != 0) {
        std::fprintf(stderr, "gpupart-demo-worker: masks must be hex (0x...)\n");
        return 2;
    }
    const long seconds = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 3600;
    const long rate = argc > 5 ? std::strtol(argv[5], nullptr, 10) : 200;
    if (seconds <= 0 || rate <= 0 || rate > 100000) {
        std::fprintf(stderr, "gpupart-demo-worker: SECONDS and LAUNCHES_PER_SECOND must be positive (rate at most 100000)\n");
        return 2;
    }
    initial.flags = GPUPART_CONTROL_HAS_MASK;
    initial.generation = 1;
    initial.writer_pid = ::getpid();
    initial.writer_uid = ::getuid();

    // Registers exactly as the shim does: a trusted root, this user's own directory, a guarded slot.
    char root[256];
    char dir[512] = "";
    char why[384] = "";
    int error = gpupart_registry_dir(root, sizeof root);
    if (error == 0) error = gpupart_registry_root_check(root, std::getenv("GPUPART_REGISTRY_DIR") != nullptr, why, sizeof why);
    if (error == 0) error = gpupart_user_dir(root, ::getuid(), 1, dir, sizeof dir);
    const std::string command = std::string("gpupart-demo-worker ") + argv[1] + " (simulated workload, no GPU)";
    gpupart_slot_file* slot = nullptr;
    char path[512];
    if (error == 0)
        error = gpupart_slot_create(dir, ::getpid(), gpupart_process_start_time(::getpid()), ::getuid(), command.c_str(),
                                    "demo (simulated)", "demo", &initial, &slot, path, sizeof path);
    if (error != 0) {
        std::fprintf(stderr, "gpupart-demo-worker: cannot register in %s: %s\n", dir[0] ? dir : root,
                     why[0] ? why : std::strerror(-error));
        return 1;
    }
    gpupart_slot_guard(slot);  // a truncated slot must not kill the worker either
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    // The GUI's demo workers end with the GUI, even when it is killed; `gpupart demo start` ones outlive it.
    if (std::getenv("GPUPART_DEMO_EXIT_WITH_PARENT") != nullptr) ::prctl(PR_SET_PDEATHSIG, SIGTERM);

    auto count_bits = [](const std::uint32_t words[4]) {
        int n = 0;
        for (int i = 0; i < 4; ++i) n += __builtin_popcount(words[i]);
        return n;
    };
    const int initial_tpcs = count_bits(initial.allowed) > 0 ? count_bits(initial.allowed) : 1;

    gpupart_status status{};
    std::uint32_t seen_seq = ~0u;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    // Simulated throughput follows the TPCs the process holds, so giving it TPCs shows in launches/s.
    auto period = std::chrono::nanoseconds(1000000000L / rate);
    while (!g_stop && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(period);
        // What the shim does at a launch: adopt a changed control block unless its mask has no real TPC.
        if (__atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != seen_seq) {
            gpupart_control c{};
            if (gpupart_control_read(&slot->control, &c, 4) == 0) {
                seen_seq = c.seq;
                const bool has_mask = (c.flags & GPUPART_CONTROL_HAS_MASK) != 0;
                if (has_mask && !gpupart_control_has_real_tpc(&c)) {
                    gpupart_add64(&slot->counters.refused_masks, 1);
                    status.state = GPUPART_SHIM_MASK_REFUSED;
                } else {
                    gpupart_slot_guard_remember(&c);
                    status.state = GPUPART_SHIM_ACTIVE;
                    status.applied_generation = c.generation;
                    status.applied_flags = has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
                    for (int i = 0; i < 4; ++i) status.applied[i] = has_mask ? c.allowed[i] : 0u;
                    const int tpcs = has_mask ? count_bits(c.allowed) : count_bits(c.real_tpcs);
                    const long scaled = rate * (tpcs > 0 ? tpcs : 1) / initial_tpcs;
                    period = std::chrono::nanoseconds(1000000000L / (scaled > 0 ? scaled : 1));
                }
                gpupart_status_write(&slot->status, &status);
            }
        }
        gpupart_add64(&slot->counters.launches, 1);
        if (status.applied_flags & GPUPART_CONTROL_HAS_MASK) gpupart_add64(&slot->counters.masked_launches, 1);
        gpupart_store64(&slot->counters.last_launch_realtime_ns, realtime_ns());
    }
    ::unlink(path);
    return 0;
}
