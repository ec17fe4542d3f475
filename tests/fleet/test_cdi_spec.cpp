// The CDI spec of a prepared claim (fleet/cdi_spec.hpp) and the checks written from the CDI specification's
// text (cdi_check.cpp): the generated spec passes them, and each rule catches what breaks it.
#include <gtest/gtest.h>

#include <algorithm>

#include "fleet/cdi_spec.hpp"
#include "fleet/claim.hpp"
#include "model/user_error.hpp"

using namespace gpupart;
using Json = nlohmann::json;

namespace {

const std::string kUid = "3f6c1a9e-6f7b-4c1d-9a55-0c2d1e4b8a77";
const std::string kGpu = "GPU-8a3c0f6e-1b2d-4e5f-8a9b-0c1d2e3f4a5b";

CdiClaimEdits edits(bool mps = true) {
    CdiClaimEdits e;
    e.claim_uid = kUid;
    e.job = claim_job("inference", kUid);
    e.gpu_key = kGpu;
    e.tpcs = TpcMask::range(0, 3) | TpcMask::range(9, 16);
    e.real_tpcs = TpcMask::range(0, 65);
    e.shim = "/usr/lib/x86_64-linux-gnu/gpupart/libgpupart-shim.so";
    e.claim_registry = "/run/gpupart-k8s/" + kUid;
    e.device_node = "/dev/nvidia3";
    if (mps) e.mps_pipe = "/run/gpupart-mps/" + kGpu;
    return e;
}

Json spec(bool mps = true) { return Json::parse(cdi_spec(edits(mps)).dump()); }

std::vector<std::string> strings(const Json& array) { return array.get<std::vector<std::string>>(); }

bool has_problem(const Json& broken, const std::string& part) {
    const auto problems = cdi_spec_problems(broken);
    return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) { return p.find(part) != std::string::npos; });
}

}  // namespace

TEST(CdiSpec, TheGeneratedSpecPassesTheSpecificationsChecks) {
    EXPECT_EQ(cdi_spec_problems(spec()), std::vector<std::string>{});
    EXPECT_EQ(cdi_spec_problems(spec(false)), std::vector<std::string>{});
    EXPECT_EQ(spec()["cdiVersion"], "0.6.0");
    EXPECT_EQ(spec()["kind"], "gpupart.io/tpc");
    EXPECT_EQ(cdi_device_id(kUid), "gpupart.io/tpc=" + kUid);
    EXPECT_EQ(cdi_spec_file_name(kUid), "gpupart.io-tpc_" + kUid + ".json");
}

TEST(CdiSpec, ContainersStartUnderTheShimWithTheClaimsMask) {
    const Json device = spec()["devices"][0];
    EXPECT_EQ(device["name"], kUid);
    EXPECT_EQ(strings(device["containerEdits"]["env"]),
              (std::vector<std::string>{"LD_PRELOAD=/opt/gpupart/libgpupart-shim.so",
                                        "GPUPART_TPCS=" + kGpu + "=0x1fe0f",
                                        "GPUPART_REAL_TPCS=" + kGpu + "=0x3ffffffffffffffff",
                                        "GPUPART_JOB=k8s:inference/" + kUid,
                                        "GPUPART_REGISTRY_DIR=/run/gpupart",
                                        "CUDA_MPS_PIPE_DIRECTORY=/run/gpupart-mps/" + kGpu,
                                        "CUDA_DEVICE_MAX_CONNECTIONS=8"}));
    const Json mounts = device["containerEdits"]["mounts"];
    ASSERT_EQ(mounts.size(), 3u);
    EXPECT_EQ(mounts[0]["hostPath"], edits().shim);
    EXPECT_EQ(mounts[0]["containerPath"], "/opt/gpupart/libgpupart-shim.so");
    EXPECT_EQ(strings(mounts[0]["options"]), (std::vector<std::string>{"ro", "nosuid", "nodev", "bind"}));
    EXPECT_EQ(mounts[1]["hostPath"], "/run/gpupart-k8s/" + kUid);  // the claim's own registry, not the node's
    EXPECT_EQ(mounts[1]["containerPath"], "/run/gpupart");
    EXPECT_EQ(strings(mounts[1]["options"]), (std::vector<std::string>{"rw", "nosuid", "nodev", "noexec", "bind"}));
    EXPECT_EQ(mounts[2]["containerPath"], "/run/gpupart-mps/" + kGpu);
    EXPECT_EQ(mounts[2]["options"][0], "ro");  // the daemon's sockets cannot be replaced from a container
    std::vector<std::string> nodes;
    for (const Json& node : device["containerEdits"]["deviceNodes"]) nodes.push_back(node["path"]);
    EXPECT_EQ(nodes, (std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia3"}));
    EXPECT_EQ(spec()["annotations"]["gpupart.io/tpcs"], "0-3,9-16");
}

TEST(CdiSpec, WithoutMpsNothingPointsAtADaemon) {
    const Json device = spec(false)["devices"][0];
    for (const std::string& entry : strings(device["containerEdits"]["env"])) EXPECT_EQ(entry.find("CUDA_MPS"), std::string::npos);
    EXPECT_EQ(device["containerEdits"]["mounts"].size(), 2u);
    CdiClaimEdits with_shm = edits();
    with_shm.mps_shm = "/run/gpupart-mps-shm/" + kGpu;
    const Json mounts = cdi_spec(with_shm)["devices"][0]["containerEdits"]["mounts"];
    EXPECT_EQ(mounts.back()["containerPath"], "/dev/shm");
}

TEST(CdiSpec, InputsThatCannotGoIntoASpecAreRefused) {
    CdiClaimEdits bad = edits();
    bad.shim = "libgpupart-shim.so";
    EXPECT_THROW(cdi_spec(bad), UserError);
    bad = edits();
    bad.claim_uid = "a/b";
    EXPECT_THROW(cdi_spec(bad), UserError);
    bad = edits();
    bad.tpcs = TpcMask::range(100, 101);  // holes only
    EXPECT_THROW(cdi_spec(bad), UserError);
    bad = edits();
    bad.device_node = "/dev/nvidia0\n";
    EXPECT_THROW(cdi_spec(bad), UserError);
}

TEST(CdiSpec, EachRuleOfTheSpecificationCatchesItsBreakage) {
    Json broken = spec();
    broken.erase("cdiVersion");
    EXPECT_TRUE(has_problem(broken, "cdiVersion: required"));
    broken = spec();
    broken["cdiVersion"] = "0.5.0";  // annotations came with 0.6.0
    EXPECT_TRUE(has_problem(broken, "annotations: need cdiVersion 0.6.0"));
    for (const char* kind : {"gpupart.io", "gpupart.io/tpc.x", "/tpc", "gpupart.io/", "-gpupart.io/tpc"}) {
        broken = spec();
        broken["kind"] = kind;
        EXPECT_TRUE(has_problem(broken, "kind '")) << kind;
    }
    broken = spec();
    broken["devices"] = Json::array();
    EXPECT_TRUE(has_problem(broken, "devices: required"));
    for (const char* name : {"", "-x", "a/b", "x-"}) {
        broken = spec();
        broken["devices"][0]["name"] = name;
        EXPECT_TRUE(has_problem(broken, "name required")) << name;
    }
    broken = spec();
    broken["devices"].push_back(broken["devices"][0]);
    EXPECT_TRUE(has_problem(broken, "name used twice"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["env"].push_back("=x");
    EXPECT_TRUE(has_problem(broken, "is not NAME=value"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["mounts"][0]["containerPath"] = "opt/x";
    EXPECT_TRUE(has_problem(broken, "'containerPath' must be an absolute path"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["mounts"][0].erase("hostPath");
    EXPECT_TRUE(has_problem(broken, "'hostPath' is required"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["deviceNodes"][0]["type"] = "x";
    EXPECT_TRUE(has_problem(broken, "type 'x'"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["deviceNodes"][0]["permissions"] = "rwx";
    EXPECT_TRUE(has_problem(broken, "permissions 'rwx'"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["hooks"] = Json::array({Json{{"hookName", "preStart"}, {"path", "/bin/true"}}});
    EXPECT_TRUE(has_problem(broken, "'hookName' must be one of"));
    broken = spec();
    broken["devices"][0]["containerEdits"] = Json::object();
    EXPECT_TRUE(has_problem(broken, "no edits"));
    broken = spec();
    broken["devices"][0]["containerEdits"]["envs"] = Json::array();
    EXPECT_TRUE(has_problem(broken, "unknown field 'envs'"));
    broken = spec();
    broken["annotations"]["gpupart.io/claim"] = 1;
    EXPECT_TRUE(has_problem(broken, "must be a string"));
    EXPECT_TRUE(has_problem(Json::array(), "must be a JSON object"));
}
