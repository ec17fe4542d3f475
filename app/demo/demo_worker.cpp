// gpupart-demo-worker: a simulated partitioned process for machines with no GPU (the demo of the GUI and
// the terminal view, and tests). It registers in the real registry exactly as the shim does, then
// "launches" a kernel at a steady rate: it follows its slot's mask the way the shim does (adopting a
// mask only when it has a real TPC), counts launches and publishes what it applies. It says everywhere
// that it is simulated (command line and shim version), and it never touches a GPU.
//   gpupart-demo-worker [--app-masks TPC_BITS] NAME TPCS_HEX REAL_TPCS_HEX [SECONDS] [LAUNCHES_PER_SECOND] [SCALING]
// TPCS_HEX and REAL_TPCS_HEX are launch-descriptor bits, as the shim's start environment (GPUPART_TPCS).
// SCALING says how the simulated time per launch follows the TPCs m it holds (LAUNCHES_PER_SECOND is its
// rate on the TPCs it starts with), so that `gpupart measure` has curves of both kinds of Zahaf et al., RTNS 2021:
//   linear   C(m) = a/m          (the default: the rate is proportional to the TPCs)
//   compute  C(m) = a/m + a/200  (keeps speeding up over the whole GPU: compute-intensive)
//   memory   C(m) = a/m + a/8    (little faster beyond about 8 TPCs: memory-intensive, Definition 1)
// --app-masks: it also acts as a program that chooses its own masks through libgpupart.so (registry layout
// 5, the slot's app block): a global mask (the lower half of its TPCs), a stream mask inside it and one
// outside its operator's mask, and it counts its launches on them as the library does (every third on
// each; a choice with no TPC inside the operator's mask counts as outside the bound). A program names TPC
// NUMBERS (TPC k = SMs 2k and 2k+1), so the worker chooses and publishes numbers (GPUPART_APP_NUMBERED) and
// translates them into descriptor bits to compare with its operator's mask, as the library does through
// the GPC map's bit_of_tpc. TPC_BITS is that map: the descriptor bit of TPC 0, 1, 2, ... comma-separated,
// one for each real TPC.
// It is "on" the GPU $GPUPART_DEMO_GPU names (a UUID; default GPU-00000000-0000-0000-0000-000000000001,
// the registry's name for GPU 0 of a snapshot without UUIDs: gpu_key in model/gpu_queries.hpp).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "registry/registry_layout.h"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"
#include "registry/slot_guard.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// b/a of C(m) = a/m + b for a SCALING name (see the top of this file); nullopt for an unknown name.
std::optional<double> serial_part(const char* scaling) {
    if (std::strcmp(scaling, "linear") == 0) return 0.0;
    if (std::strcmp(scaling, "compute") == 0) return 1.0 / 200;
    if (std::strcmp(scaling, "memory") == 0) return 1.0 / 8;
    return std::nullopt;
}

// The GPU's numbering as the GPC map file gives it to libgpupart.so: the descriptor bit of each TPC number.
struct DemoNumbering {
    int bit_of[128];
    int count = 0;
};

// TPC_BITS ("b0,b1,..."): a one-to-one map of TPC numbers 0..n-1 onto every bit of `real`, as the GPC map
// file's check (gpupart_gpcs_check) requires; nullopt otherwise.
std::optional<DemoNumbering> parse_tpc_bits(const char* text, const std::uint32_t real[4]) {
    DemoNumbering numbering;
    std::uint32_t seen[4] = {};
    const char* at = text;
    while (*at != '\0') {
        if (numbering.count == 128 || *at < '0' || *at > '9') return std::nullopt;
        char* end = nullptr;
        const long bit = std::strtol(at, &end, 10);
        if (bit < 0 || bit >= 128 || !((real[bit / 32] >> (bit % 32)) & 1u) || ((seen[bit / 32] >> (bit % 32)) & 1u))
            return std::nullopt;
        seen[bit / 32] |= 1u << (bit % 32);
        numbering.bit_of[numbering.count++] = static_cast<int>(bit);
        at = end;
        if (*at == ',' && at[1] != '\0') ++at;
        else if (*at != '\0') return std::nullopt;
    }
    for (int w = 0; w < 4; ++w)
        if (seen[w] != real[w]) return std::nullopt;  // every real TPC has a number
    return numbering;
}

// Descriptor bits as TPC numbers (bits of no TPC dropped), and TPC numbers as descriptor bits.
void to_numbers(const DemoNumbering& numbering, const std::uint32_t bits[4], std::uint32_t numbers[4]) {
    for (int w = 0; w < 4; ++w) numbers[w] = 0;
    for (int k = 0; k < numbering.count; ++k) {
        const int bit = numbering.bit_of[k];
        if ((bits[bit / 32] >> (bit % 32)) & 1u) numbers[k / 32] |= 1u << (k % 32);
    }
}
void to_bits(const DemoNumbering& numbering, const std::uint32_t numbers[4], std::uint32_t bits[4]) {
    for (int w = 0; w < 4; ++w) bits[w] = 0;
    for (int k = 0; k < numbering.count; ++k) {
        const int bit = numbering.bit_of[k];
        if ((numbers[k / 32] >> (k % 32)) & 1u) bits[bit / 32] |= 1u << (bit % 32);
    }
}

// The program-chosen masks of --app-masks, as allowed sets of TPC NUMBERS (a program's view; stored below
// as libsmctrl's disable masks), and the same in descriptor bits for the overlap with the operator's mask.
struct DemoAppMasks {
    std::uint32_t global[4] = {};
    std::uint32_t inside[4] = {};   // stream 0x7f0000001000: the lowest TPCs of the global mask
    std::uint32_t outside[4] = {};  // stream 0x7f0000002000: real TPCs outside the operator's mask
    std::uint32_t global_bits[4] = {}, inside_bits[4] = {}, outside_bits[4] = {};
};
constexpr std::uint64_t kInsideStream = 0x7f0000001000ull;
constexpr std::uint64_t kOutsideStream = 0x7f0000002000ull;

// The first `count` set bits of `from`.
void first_bits(const std::uint32_t from[4], int count, std::uint32_t out[4]) {
    for (int bit = 0; bit < 128 && count > 0; ++bit)
        if ((from[bit / 32] >> (bit % 32)) & 1u) {
            out[bit / 32] |= 1u << (bit % 32);
            --count;
        }
}

// `allowed_bits` and `real_bits` are descriptor bits (the worker's arguments); the choice is made in TPC
// numbers: the lowest numbers of its operator's mask, the lowest real numbers outside it.
DemoAppMasks demo_app_masks(const DemoNumbering& numbering, const std::uint32_t allowed_bits[4], const std::uint32_t real_bits[4],
                            int tpcs) {
    std::uint32_t allowed[4], real[4];
    to_numbers(numbering, allowed_bits, allowed);
    to_numbers(numbering, real_bits, real);
    DemoAppMasks masks;
    first_bits(allowed, tpcs > 1 ? tpcs / 2 : 1, masks.global);
    first_bits(allowed, tpcs > 3 ? tpcs / 4 : 1, masks.inside);
    std::uint32_t others[4];
    for (int w = 0; w < 4; ++w) others[w] = real[w] & ~allowed[w];
    first_bits(others, 4, masks.outside);
    to_bits(numbering, masks.global, masks.global_bits);
    to_bits(numbering, masks.inside, masks.inside_bits);
    to_bits(numbering, masks.outside, masks.outside_bits);
    return masks;
}

// Publishes `masks` in the slot's app block through its seqlock, as libgpupart.so does: TPC numbers.
void publish_app_masks(gpupart_app_masks& block, const DemoAppMasks& masks) {
    const std::uint32_t odd = gpupart_seq_write_begin(&block.seq);
    gpupart_payload_store32(&block.flags, GPUPART_APP_IN_USE | GPUPART_APP_GLOBAL_SET | GPUPART_APP_NUMBERED);
    for (int w = 0; w < 4; ++w) gpupart_payload_store32(&block.global_disable[w], ~masks.global[w]);
    const std::uint64_t streams[2] = {kInsideStream, kOutsideStream};
    const std::uint32_t* allowed[2] = {masks.inside, masks.outside};
    for (int s = 0; s < 2; ++s) {
        gpupart_payload_store64(&block.streams[s].stream, streams[s]);
        for (int w = 0; w < 4; ++w) gpupart_payload_store32(&block.streams[s].disable[w], ~allowed[s][w]);
    }
    gpupart_payload_store32(&block.stream_count, 2);
    gpupart_seq_write_end(&block.seq, odd);
}

bool overlaps(const std::uint32_t a[4], const std::uint32_t b[4]) {
    return ((a[0] & b[0]) | (a[1] & b[1]) | (a[2] & b[2]) | (a[3] & b[3])) != 0;
}

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

int main(int argc, char** argv) {
    const bool app_masks = argc > 2 && std::strcmp(argv[1], "--app-masks") == 0;
    const char* tpc_bits = app_masks ? argv[2] : nullptr;
    if (app_masks) {
        argc -= 2;
        argv += 2;
    }
    if (argc < 4 || argc > 7) {
        std::fprintf(stderr, "usage: gpupart-demo-worker [--app-masks TPC_BITS] NAME TPCS_HEX REAL_TPCS_HEX [SECONDS] "
                             "[LAUNCHES_PER_SECOND] [linear|compute|memory]\n");
        return 2;
    }
    gpupart_control_payload initial{};
    gpupart_control_gpu& mine = initial.gpus[0];
    if (gpupart_parse_hex_mask(argv[2], mine.allowed) != 0 || gpupart_parse_hex_mask(argv[3], mine.real_tpcs) != 0) {
        std::fprintf(stderr, "gpupart-demo-worker: masks must be hex (0x...)\n");
        return 2;
    }
    std::optional<DemoNumbering> numbering;
    if (app_masks && !(numbering = parse_tpc_bits(tpc_bits, mine.real_tpcs))) {
        std::fprintf(stderr, "gpupart-demo-worker: TPC_BITS must give each TPC number's descriptor bit (decimal, comma-separated), "
                             "every bit of REAL_TPCS_HEX once\n");
        return 2;
    }
    const char* gpu_text = std::getenv("GPUPART_DEMO_GPU");
    if (gpu_text == nullptr || gpu_text[0] == '\0') gpu_text = "GPU-00000000-0000-0000-0000-000000000001";
    if (std::strlen(gpu_text) != 40 || gpupart_uuid_parse(gpu_text, &mine.uuid) != 40) {
        std::fprintf(stderr, "gpupart-demo-worker: GPUPART_DEMO_GPU is not a GPU UUID\n");
        return 2;
    }
    const gpupart_gpu_uuid gpu = mine.uuid;
    const long seconds = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 3600;
    const long rate = argc > 5 ? std::strtol(argv[5], nullptr, 10) : 200;
    if (seconds <= 0 || rate <= 0 || rate > 100000) {
        std::fprintf(stderr, "gpupart-demo-worker: SECONDS and LAUNCHES_PER_SECOND must be positive (rate at most 100000)\n");
        return 2;
    }
    const char* scaling = argc > 6 ? argv[6] : "linear";
    const std::optional<double> serial = serial_part(scaling);
    if (!serial) {
        std::fprintf(stderr, "gpupart-demo-worker: SCALING must be linear, compute or memory\n");
        return 2;
    }
    mine.flags = GPUPART_CONTROL_HAS_MASK;
    initial.count = 1;
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
    // The kind is part of the command line, so a curve saved for one kind is never used for the other.
    const std::string command = std::string("gpupart-demo-worker ") + argv[1] +
                                (*serial == 0 ? std::string(" (simulated workload, no GPU)")
                                              : std::string(" (simulated ") + scaling + "-bound workload, no GPU)");
    gpupart_slot_file* slot = nullptr;
    char path[512];
    if (error == 0)
        error = gpupart_slot_create(dir, ::getpid(), gpupart_process_start_time(::getpid()), ::getuid(), command.c_str(),
                                    "demo (simulated)", "demo", std::getenv(GPUPART_ENV_JOB), &initial, &slot, path, sizeof path);
    if (error != 0) {
        std::fprintf(stderr, "gpupart-demo-worker: cannot register in %s: %s\n", dir[0] ? dir : root,
                     why[0] ? why : std::strerror(-error));
        return 1;
    }
    gpupart_slot_guard(slot);  // a truncated slot must not kill the worker either
    // Registered: nothing more to say, so the caller's stderr is let go (stdin and stdout are /dev/null from
    // the start). A worker lives for minutes; holding the caller's stderr would keep `gpupart demo start
    // 2>&1 | cat` (or a CI log, an ssh session) open until the last worker ends.
    if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
        ::dup2(null, STDERR_FILENO);
        ::close(null);
    }
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    // The GUI's demo workers end with the GUI, even when it is killed; `gpupart demo start` ones outlive it.
    if (std::getenv("GPUPART_DEMO_EXIT_WITH_PARENT") != nullptr) ::prctl(PR_SET_PDEATHSIG, SIGTERM);

    auto count_bits = [](const std::uint32_t words[4]) {
        int n = 0;
        for (int i = 0; i < 4; ++i) n += __builtin_popcount(words[i]);
        return n;
    };
    const int initial_tpcs = count_bits(mine.allowed) > 0 ? count_bits(mine.allowed) : 1;
    DemoAppMasks chosen;
    if (app_masks) {
        chosen = demo_app_masks(*numbering, mine.allowed, mine.real_tpcs, initial_tpcs);
        publish_app_masks(slot->app, chosen);
    }
    std::uint64_t launch_number = 0;

    // Its one GPU, as the shim publishes a GPU it has a context on.
    for (int w = 0; w < 4; ++w) gpupart_store32(&slot->status.gpus[0].uuid.words[w], gpu.words[w]);
    __atomic_store_n(&slot->status.gpu_count, 1u, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->status.state, static_cast<std::uint32_t>(GPUPART_SHIM_ACTIVE), __ATOMIC_RELEASE);
    gpupart_status_gpu status{};
    std::uint32_t seen_seq = ~0u;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    // Simulated throughput follows the TPCs the process holds, so giving it TPCs shows in launches/s:
    // C(m) = a/m + b seconds per launch with b = serial x a, a chosen so that C(initial_tpcs) = 1/rate.
    const double a = 1.0 / (static_cast<double>(rate) * (1.0 / initial_tpcs + *serial));
    const auto period_for = [&](int tpcs) {
        const double seconds_per_launch = a / (tpcs > 0 ? tpcs : 1) + *serial * a;
        return std::chrono::nanoseconds(static_cast<long>(seconds_per_launch * 1e9));
    };
    auto period = period_for(initial_tpcs);
    // Launch times on a fixed schedule (sleep_until), not a sleep after each launch: the time a loop
    // itself takes would otherwise add a b of its own and bend every curve.
    auto next = std::chrono::steady_clock::now();
    while (!g_stop && std::chrono::steady_clock::now() < deadline) {
        next += period;
        // Far behind (stopped, or a machine under load): start the schedule again rather than burst.
        if (const auto now = std::chrono::steady_clock::now(); next < now - std::chrono::seconds(1)) next = now;
        std::this_thread::sleep_until(next);
        // What the shim does at a launch: adopt a changed control block unless its mask has no real TPC.
        if (__atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != seen_seq) {
            static gpupart_control c{};
            if (gpupart_control_read(&slot->control, &c, 4) == 0) {
                seen_seq = c.seq;
                const int index = gpupart_control_find(&c.current, &gpu);
                gpupart_control_gpu entry{};
                if (index >= 0) entry = c.current.gpus[index];
                const bool has_mask = (entry.flags & GPUPART_CONTROL_HAS_MASK) != 0;
                if (has_mask && !gpupart_control_has_real_tpc(&entry)) {
                    gpupart_add64(&slot->counters.refused_masks, 1);
                    status.state = GPUPART_SHIM_MASK_REFUSED;
                } else {
                    gpupart_slot_guard_remember(&c);
                    status.state = GPUPART_SHIM_ACTIVE;
                    status.applied_generation = c.current.generation;
                    status.applied_flags = has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
                    for (int i = 0; i < 4; ++i) status.applied[i] = has_mask ? entry.allowed[i] : 0u;
                    period = period_for(has_mask ? count_bits(entry.allowed) : count_bits(mine.real_tpcs));
                }
                status.descriptor_version = 0x40;  // what the recorded H200 uses
                gpupart_store64(&slot->gpu_counters[0].applied_realtime_ns, realtime_ns());
                gpupart_status_gpu_write(&slot->status.gpus[0], &status);
            }
        }
        gpupart_add64(&slot->counters.launches, 1);
        gpupart_add64(&slot->gpu_counters[0].launches, 1);
        if (status.applied_flags & GPUPART_CONTROL_HAS_MASK) {
            gpupart_add64(&slot->counters.masked_launches, 1);
            gpupart_add64(&slot->gpu_counters[0].masked_launches, 1);
        }
        gpupart_store64(&slot->counters.last_launch_realtime_ns, realtime_ns());
        if (app_masks) {  // every third launch on the global mask, the inside stream, the outside stream
            const int which = static_cast<int>(launch_number++ % 3);
            gpupart_add64(&slot->app.app_launches, 1);
            if (which > 0) gpupart_add64(&slot->app.streams[which - 1].launches, 1);
            // The choice in descriptor bits (only real TPCs' bits), against the operator's bits as applied; as in
            // the library, a choice of no real TPC (an empty outside stream when the operator gave it every TPC)
            // is outside the bound even without an operator's mask.
            const std::uint32_t* choice = which == 0 ? chosen.global_bits : which == 1 ? chosen.inside_bits : chosen.outside_bits;
            const std::uint32_t* bound = (status.applied_flags & GPUPART_CONTROL_HAS_MASK) ? status.applied : mine.real_tpcs;
            if (!overlaps(choice, bound)) gpupart_add64(&slot->app.outside_bound, 1);
        }
    }
    ::unlink(path);
    return 0;
}
