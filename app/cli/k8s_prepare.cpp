#include "k8s_prepare.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fleet/cdi_spec.hpp"
#include "fleet/claim_store.hpp"
#include "fleet/owned_directory.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "sources/udev_source.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

// "00000000:17:00.0" (NVML) and "0000:17:00.0" (the driver's /proc) name one device.
bool same_bus_id(const std::string& a, const std::string& b) {
    const auto split = [](const std::string& id) -> std::pair<unsigned long, std::string> {
        const std::size_t colon = id.find(':');
        if (colon == std::string::npos) return {0, id};
        std::string rest = id.substr(colon + 1);
        for (char& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        try {
            return {std::stoul(id.substr(0, colon), nullptr, 16), rest};
        } catch (const std::exception&) {
            return {~0ul, id};
        }
    };
    return split(a) == split(b);
}

// The GPU's /dev/nvidiaN: --device-node, else the driver's minor number for a live GPU. A recording names no
// node: /dev/nvidia<index> is assumed, and said.
std::string device_node_of(const ChosenSnapshot& topology, const Gpu& gpu, const std::string& given) {
    if (!given.empty()) return given;
    if (!topology.live) {
        fmt::print(stderr, "gpupart: {} is a recording: its device node is assumed to be /dev/nvidia{} (--device-node "
                           "names it)\n", topology.origin, gpu.index);
        return fmt::format("/dev/nvidia{}", gpu.index);
    }
    if (gpu.pci_bus_id.value)
        for (const UdevGpu& found : read_udev(machine_roots().proc).gpus)
            if (same_bus_id(found.bus_id, *gpu.pci_bus_id.value))
                for (const std::string& node : found.device_nodes)
                    if (node.starts_with("/dev/nvidia")) return node;
    throw UserError(fmt::format("the device node of GPU {} is not known (no /dev/nvidiaN for its PCI bus id): name it "
                                "with --device-node; nothing prepared", gpu.index));
}

Json claim_json(const Claim& claim, const Gpu& gpu) {
    std::vector<std::string> gpcs;
    for (int index : gpcs_fully_covered(gpu, claim.tpcs)) gpcs.push_back(gpc_name(index));
    return Json{{"uid", claim.uid},          {"namespace", claim.namespace_name},
                {"name", claim.name},        {"unit", std::string(to_string(claim.unit))},
                {"count", claim.count},      {"tpcs", claim.tpcs.to_list()},
                {"tpcs_hex", claim.tpcs.to_hex()}, {"tpc_count", claim.tpcs.count()},
                {"sms", sms_of(gpu, claim.tpcs).size()}, {"whole_gpcs", gpcs},
                {"job", claim.job},          {"prepared", claim.prepared}};
}

}  // namespace

TpcNumberings claim_file_maps() { return numberings_of(machine_gpus_for_numbers()); }

const TpcNumbering* claim_file_map(const TpcNumberings& maps, const std::string& key) {
    const auto found = maps.find(key);
    return found == maps.end() ? nullptr : &found->second;
}

int run_k8s_prepare(const K8sPrepareOptions& options) {
    const ChosenSnapshot topology = partition_topology(options.snapshot);
    const Gpu& gpu = selected_gpu(topology, options.snapshot);
    const std::string key = gpu_key(gpu);
    if (!options.tpcs && !options.gpcs) throw UserError("how many TPCs did the claim consume? --tpcs N (or --gpcs N)");
    const ClaimRequest request{options.claim, options.namespace_name, options.name,
                               options.gpcs ? ClaimUnit::gpcs : ClaimUnit::tpcs, options.gpcs ? *options.gpcs : *options.tpcs};
    check_claim_request(request);
    const std::string shim = find_shim();
    const std::string node = device_node_of(topology, gpu, options.device_node);

    const ClaimStore store(options.paths.state_dir, ClaimStore::Access::change);
    const TpcNumberings maps = numberings_of(topology.snapshot.gpus);  // reads files written in descriptor bits
    // One claim, one GPU: its containers reach one MPS daemon (docs/kubernetes.md, "Open questions").
    for (const std::string& other : store.gpu_keys())
        if (other != key && store.load_as_recorded(other, claim_file_map(maps, other)).find(request.uid) != nullptr)
            throw UserError(fmt::format("claim {} already holds TPCs on GPU {}: a claim of TPCs on several GPUs is not "
                                        "supported (one MPS daemon per GPU); nothing prepared",
                                        request.uid, other));
    ClaimBook book = store.load(key, real_tpcs(gpu), claim_file_map(maps, key));
    const ClaimBook::Prepared prepared = book.prepare(gpu, request, claim_time_now());

    CdiClaimEdits edits;
    edits.claim_uid = prepared.claim.uid;
    edits.job = prepared.claim.job;
    edits.gpu_key = key;
    const TpcNumbering numbering = TpcNumbering::of(gpu);  // the container's shim is given descriptor bits
    edits.tpcs = numbering.to_bits(prepared.claim.tpcs);
    edits.real_tpcs = numbering.to_bits(real_tpcs(gpu));
    edits.shim = shim;
    edits.device_node = node;
    std::string mps_missing;
    if (!options.no_mps) {
        edits.mps_pipe = fmt::format("{}/{}", options.mps_root, key);
        struct stat st {};
        if (::stat(edits.mps_pipe.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) mps_missing = edits.mps_pipe;
        if (!options.mps_shm_root.empty()) edits.mps_shm = fmt::format("{}/{}", options.mps_shm_root, key);
    }
    edits.claim_registry = fmt::format("{}/{}", options.paths.registry_root, prepared.claim.uid);
    const Json spec = cdi_spec(edits);  // before anything is written: a spec that cannot be made changes nothing
    if (const auto problems = cdi_spec_problems(spec); !problems.empty())
        throw std::logic_error(fmt::format("the CDI spec gpupart made breaks the CDI specification: {}", problems.front()));

    // The claim is recorded before its spec exists: a crash in between leaves a claim whose retry writes the spec,
    // never a spec whose TPCs nobody recorded.
    make_claim_registry(options.paths.registry_root, prepared.claim.uid);
    if (!prepared.already) store.save(book);
    std::optional<std::string> spec_file;
    if (options.paths.cdi_dir) {
        use_owned_directory(*options.paths.cdi_dir, "CDI directory", true);
        spec_file = fmt::format("{}/{}", *options.paths.cdi_dir, cdi_spec_file_name(prepared.claim.uid));
        replace_file(*spec_file, spec.dump(2) + "\n", 0644, "CDI spec");
    }
    if (!mps_missing.empty())
        fmt::print(stderr, "gpupart: MPS for GPU {} is not running (no {}): the claim's containers cannot start until it "
                           "is (systemctl start gpupart-mps@{}), or prepare with --no-mps\n",
                   key, mps_missing, key);

    if (options.json) {
        fmt::print("{}\n", json_answer(Json{{"claim", claim_json(prepared.claim, gpu)},
                                {"gpu", Json{{"index", gpu.index}, {"uuid", key}, {"name", gpu_display_name(gpu)}}},
                                {"already_prepared", prepared.already},
                                {"cdi_device", cdi_device_id(prepared.claim.uid)},
                                {"cdi_spec_file", spec_file ? Json(*spec_file) : Json()},
                                {"cdi_spec", spec}}));
        return 0;
    }
    const Claim& claim = prepared.claim;
    std::vector<std::string> whole;
    for (int index : gpcs_fully_covered(gpu, claim.tpcs)) whole.push_back(gpc_name(index));
    fmt::print("claim {} ({}/{}){}: {} TPCs {} ({} SMs{}) on GPU {} ({}, {})\n", claim.uid, claim.namespace_name,
               claim.name.empty() ? "-" : claim.name, prepared.already ? " was already prepared" : " prepared",
               claim.tpcs.count(), claim.tpcs.to_list(), sms_of(gpu, claim.tpcs).size(),
               whole.empty() ? std::string() : fmt::format("; whole {}", fmt::join(whole, " ")), gpu.index,
               gpu_display_name(gpu), key);
    fmt::print("job {}; free on this GPU now: {} of {} TPCs\n", claim.job, book.free().count(), real_tpcs(gpu).count());
    if (spec_file) {
        fmt::print("CDI device {}: spec written to {}\n", cdi_device_id(claim.uid), *spec_file);
    } else {
        fmt::print("CDI device {}: spec (not written: no --cdi-dir):\n{}\n", cdi_device_id(claim.uid), spec.dump(2));
    }
    return 0;
}

int run_k8s_unprepare(const std::string& claim, const K8sPaths& paths, bool json) {
    check_claim_uid(claim);
    const ClaimStore store(paths.state_dir, ClaimStore::Access::change);
    // First nothing new may start with the claim's TPCs (its spec), then its registry goes, then its TPCs are free.
    bool spec_removed = false;
    if (paths.cdi_dir && use_owned_directory(*paths.cdi_dir, "CDI directory", false)) {
        const std::string spec_file = fmt::format("{}/{}", *paths.cdi_dir, cdi_spec_file_name(claim));
        struct stat st {};
        if (::lstat(spec_file.c_str(), &st) == 0) {
            if (!S_ISREG(st.st_mode))
                throw UserError(fmt::format("CDI spec {}: is {}, not a file gpupart wrote; nothing released",
                                            one_line(spec_file), file_kind(st.st_mode)));
            if (::unlink(spec_file.c_str()) != 0)
                throw UserError(fmt::format("CDI spec {}: cannot remove it: {}; nothing released", one_line(spec_file),
                                            std::strerror(errno)));
            spec_removed = true;
        }
    }
    // A registry that cannot be removed whole (a container left more than gpupart can remove) still lets the
    // TPCs go: the spec is gone, so nothing new starts with them; what is left is said, and the exit is 1.
    bool registry_removed = false;
    std::string registry_left;
    try {
        registry_removed = remove_claim_registry(paths.registry_root, claim);
    } catch (const UserError& error) {
        registry_left = error.what();
    }
    std::optional<Claim> released;
    std::string on_gpu;
    const TpcNumberings maps = claim_file_maps();
    for (const std::string& key : store.gpu_keys()) {
        ClaimBook book = store.load_as_recorded(key, claim_file_map(maps, key));
        if ((released = book.release(claim))) {
            store.save(book);
            on_gpu = key;
            break;
        }
    }
    if (json) {
        fmt::print("{}\n", json_answer(Json{{"claim", claim},
                                {"released", released.has_value()},
                                {"gpu", released ? Json(on_gpu) : Json()},
                                {"tpcs", released ? Json(released->tpcs.to_list()) : Json()},
                                {"cdi_spec_removed", spec_removed},
                                {"registry_removed", registry_removed},
                                {"left", registry_left.empty() ? Json::array() : Json::array({registry_left})}}));
    } else if (released) {
        fmt::print("claim {} released: TPCs {} of GPU {} are free\n", claim, released->tpcs.to_list(), on_gpu);
    } else {
        // The kubelet retries an unprepare whose answer it did not get: a second one is no error.
        fmt::print("claim {} is not prepared on this node: nothing to release\n", claim);
    }
    if (registry_left.empty()) return 0;
    std::vector<std::string> done;
    if (spec_removed) done.push_back("its CDI spec was removed");
    if (released) done.push_back(fmt::format("its TPCs {} were released", released->tpcs.to_list()));
    fmt::print(stderr, "gpupart: claim {}: left behind: {}; {}; remove what is left by hand, or unprepare again\n", claim,
               registry_left, done.empty() ? std::string("nothing else was left to release")
                                           : fmt::format("{}", fmt::join(done, ", ")));
    return 1;
}

}  // namespace gpupart::cli
