// gpupart k8s prepare|unprepare|claims|resource-slice: what gpupart's Kubernetes driver (docs/kubernetes.md) does on
// this node, by hand: place a claim's TPCs and write its CDI spec, release it, list the claims, and print the
// ResourceSlice the driver would publish. The driver itself is designed, not built; these run the code it would.
#include <memory>

#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "fleet/claim_store.hpp"
#include "fleet/resource_slice.hpp"
#include "fleet/yaml_text.hpp"
#include "k8s_prepare.hpp"
#include "model/user_error.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

void add_path_options(CLI::App& command, K8sPaths& paths, bool with_cdi) {
    command.add_option("--state-dir", paths.state_dir, "Where the node's claims are kept")->capture_default_str();
    command.add_option("--registry-root", paths.registry_root, "Where each claim's registry directory is made")
        ->capture_default_str();
    if (with_cdi)
        command.add_option("--cdi-dir", paths.cdi_dir, "Write the claim's CDI spec here (e.g. /var/run/cdi); without "
                                                       "it the spec is printed");
}

int print_claims(const K8sPaths& paths, bool json) {
    const ClaimStore store(paths.state_dir, ClaimStore::Access::read);
    Json all = Json::array();
    const TpcNumberings maps = claim_file_maps();
    for (const std::string& key : store.gpu_keys()) {
        const ClaimBook book = store.load_as_recorded(key, claim_file_map(maps, key));
        for (const Claim& claim : book.claims()) {
            if (json) {
                all.push_back(Json{{"gpu", key}, {"uid", claim.uid}, {"namespace", claim.namespace_name},
                                   {"name", claim.name}, {"unit", std::string(to_string(claim.unit))},
                                   {"count", claim.count}, {"tpcs", claim.tpcs.to_list()},
                                   {"tpc_count", claim.tpcs.count()}, {"job", claim.job}, {"prepared", claim.prepared}});
            } else {
                if (all.empty()) fmt::print("{:<42} {:<38} {:<24} {:>6} {}\n", "GPU", "CLAIM", "NAMESPACE/NAME", "ASKED", "TPCS");
                all.push_back(claim.uid);
                fmt::print("{:<42} {:<38} {:<24} {:>6} {}\n", key, claim.uid,
                           fmt::format("{}/{}", claim.namespace_name, claim.name.empty() ? "-" : claim.name),
                           fmt::format("{}{}", claim.count, claim.unit == ClaimUnit::gpcs ? "g" : ""), claim.tpcs.to_list());
            }
        }
        if (!json) fmt::print("{}: {} of {} TPCs free\n", key, book.free().count(), book.real_tpcs().count());
    }
    if (json) fmt::print("{}\n", json_answer(Json{{"claims", all}}));
    else if (all.empty()) fmt::print("no claims prepared on this node\n");
    return kExitOk;
}

std::string node_host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "";
    return name;
}

}  // namespace

Command add_k8s_command(CLI::App& app) {
    struct K8sOptions {
        std::string action;
        K8sPrepareOptions prepare;
        bool json = false;
        SnapshotOptions slice_snapshot;
        std::string node;
        long generation = 1;
    };
    auto options = std::make_shared<K8sOptions>();
    CLI::App* k8s = app.add_subcommand("k8s", "What gpupart's Kubernetes DRA driver does on this node (docs/kubernetes.md)");
    k8s->require_subcommand(1);

    K8sPrepareOptions& p = options->prepare;
    CLI::App* prepare = k8s->add_subcommand("prepare", "Place a claim's TPCs (GPC-packed, disjoint from other claims) and "
                                                       "make its CDI spec, as NodePrepareResources does");
    prepare->callback([options] { options->action = "prepare"; });
    prepare->add_option("--claim", p.claim, "The ResourceClaim's metadata.uid")->required();
    prepare->add_option("--namespace", p.namespace_name, "The claim's namespace")->capture_default_str();
    prepare->add_option("--name", p.name, "The claim's name (shown only)");
    auto* tpcs = prepare->add_option("--tpcs", p.tpcs, "TPCs the claim consumed (its allocation's consumedCapacity tpcs)");
    auto* gpcs = prepare->add_option("--gpcs", p.gpcs, "Whole GPCs instead of a TPC count");
    tpcs->excludes(gpcs);
    add_snapshot_options(*prepare, p.snapshot);
    add_path_options(*prepare, p.paths, true);
    prepare->add_option("--mps-root", p.mps_root, "Per-GPU MPS pipe directories")->capture_default_str();
    prepare->add_option("--mps-shm-root", p.mps_shm_root, "Per-GPU /dev/shm of the MPS daemons, mounted as the "
                                                          "container's /dev/shm (none by default)");
    prepare->add_flag("--no-mps", p.no_mps, "No MPS daemon for the claim's containers");
    prepare->add_option("--device-node", p.device_node, "The GPU's /dev/nvidiaN (default: from the driver)");
    prepare->add_flag("--json", p.json, "Machine-readable output");

    CLI::App* unprepare = k8s->add_subcommand("unprepare", "Release a claim's TPCs, registry and CDI spec, as "
                                                           "NodeUnprepareResources does");
    unprepare->callback([options] { options->action = "unprepare"; });
    unprepare->add_option("--claim", p.claim, "The ResourceClaim's metadata.uid")->required();
    add_path_options(*unprepare, p.paths, true);
    unprepare->add_flag("--json", options->json, "Machine-readable output");

    CLI::App* claims = k8s->add_subcommand("claims", "The claims prepared on this node and their TPCs");
    claims->callback([options] { options->action = "claims"; });
    claims->add_option("--state-dir", p.paths.state_dir, "Where the node's claims are kept")->capture_default_str();
    claims->add_flag("--json", options->json, "Machine-readable output");

    CLI::App* slice = k8s->add_subcommand("resource-slice", "The ResourceSlice the driver would publish for this node "
                                                            "(YAML, or JSON with --json)");
    slice->callback([options] { options->action = "resource-slice"; });
    slice->add_option("--node", options->node, "The node's name (default: this host's name)");
    slice->add_option("--generation", options->generation, "The pool's generation")->capture_default_str();
    slice->add_option("--snapshot", options->slice_snapshot.snapshot,
                      "Snapshot to read (default: this machine's GPUs where readable, else builtin:h200)");
    slice->add_flag("--json", options->json, "JSON instead of YAML");

    return {k8s, [options] {
                if (options->action == "prepare") return run_k8s_prepare(options->prepare);
                if (options->action == "unprepare")
                    return run_k8s_unprepare(options->prepare.claim, options->prepare.paths, options->json);
                if (options->action == "claims") return print_claims(options->prepare.paths, options->json);
                const ChosenSnapshot topology = partition_topology(options->slice_snapshot);
                const std::string node = options->node.empty() ? node_host_name() : options->node;
                const Json object = resource_slice(topology.snapshot.gpus, SliceOptions{node, options->generation});
                if (options->json) fmt::print("{}\n", json_answer(object));
                else fmt::print("{}", yaml_text(object));
                return kExitOk;
            }};
}

}  // namespace gpupart::cli
