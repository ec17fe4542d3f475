// The ResourceSlice `gpupart k8s resource-slice` prints (fleet/resource_slice.hpp) and the YAML it is printed
// as (fleet/yaml_text.hpp), on the recorded H200.
#include <gtest/gtest.h>

#include "fleet/resource_slice.hpp"
#include "fleet/yaml_text.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using Json = nlohmann::ordered_json;

namespace {
const Snapshot& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot;
}
}  // namespace

TEST(ResourceSlice, OneSharedDeviceOfTpcsPerGpu) {
    const Json slice = resource_slice(h200().gpus, SliceOptions{"node-7", 3});
    EXPECT_EQ(slice["apiVersion"], "resource.k8s.io/v1");
    EXPECT_EQ(slice["kind"], "ResourceSlice");
    EXPECT_EQ(slice["spec"]["driver"], "gpupart.io");
    EXPECT_EQ(slice["spec"]["nodeName"], "node-7");
    EXPECT_EQ(slice["spec"]["pool"], (Json{{"name", "node-7"}, {"generation", 3}, {"resourceSliceCount", 1}}));
    ASSERT_EQ(slice["spec"]["devices"].size(), 1u);
    const Json device = slice["spec"]["devices"][0];
    EXPECT_EQ(device["name"], "gpu-0");
    EXPECT_EQ(device["allowMultipleAllocations"], true);
    EXPECT_EQ(device["capacity"]["tpcs"],
              (Json{{"value", "66"},
                    {"requestPolicy", {{"default", "66"}, {"validRange", {{"min", "1"}, {"max", "66"}, {"step", "1"}}}}}}));
    EXPECT_EQ(device["attributes"]["gpcs"], (Json{{"int", 8}}));
    EXPECT_EQ(device["attributes"]["sms"], (Json{{"int", 132}}));
    EXPECT_EQ(device["attributes"]["productName"], (Json{{"string", "NVIDIA H200"}}));
    EXPECT_EQ(device["attributes"]["uuid"]["string"], "GPU-00000000-0000-0000-0000-000000000001");
}

TEST(ResourceSlice, ANodeNameKubernetesRefusesIsRefused) {
    for (const char* node : {"", "Node_1", "-a", "a/b"}) EXPECT_THROW(resource_slice(h200().gpus, SliceOptions{node, 1}), UserError) << node;
    EXPECT_THROW(resource_slice(h200().gpus, SliceOptions{"n", 0}), UserError);
}

TEST(YamlText, BlockStyleWithEveryStringQuoted) {
    const Json value{{"apiVersion", "v1"},
                     {"count", 2},
                     {"on", true},
                     {"list", Json::array({Json{{"a", "1"}, {"b", Json::array({1, 2})}}, "x\ny", Json::array({3})})},
                     {"empty", Json::object()},
                     {"gpupart.io/key", nullptr},
                     {"66", "-"}};
    EXPECT_EQ(yaml_text(value),
              "apiVersion: \"v1\"\n"
              "count: 2\n"
              "\"on\": true\n"
              "list:\n"
              "  - a: \"1\"\n"
              "    b:\n"
              "      - 1\n"
              "      - 2\n"
              "  - \"x\\ny\"\n"
              "  -\n"
              "    - 3\n"
              "empty: {}\n"
              "gpupart.io/key: null\n"
              "\"66\": \"-\"\n");
    EXPECT_EQ(yaml_text(Json("\x1b[2J")), "\"\\u001b[2J\"\n");  // control bytes escaped, never raw
}
