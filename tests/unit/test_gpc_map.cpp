// GPC map files (registry/gpc_map.hpp, registry/gpcs_file.h): what gpupart writes for libgpupart's
// libsmctrl_get_gpc_info, built from a GPU's model, and read back through the C reader the library uses.
#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include "model/tpc_numbering.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "registry/gpc_map.hpp"
#include "registry/gpcs_file.h"
#include "registry/registry_slot.h"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& recorded_h200() {  // the recording with its board's UUID, unlike the built-in one
    static const Snapshot snapshot = load_snapshot(GPUPART_FIXTURES "/live-h200/live-h200.json");
    return snapshot.gpus.at(0);
}

struct TempDir {
    TempDir() {
        char pattern[] = "/tmp/gpupart-gpc-map-XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string path;
};

TEST(GpcMap, ABuiltInRecordingNamesNoBoardSoGivesNoMap) {
    const Snapshot builtin = load_snapshot("builtin:h200");
    EXPECT_NE(gpc_map_unavailable_reason(builtin.gpus.at(0)).find("has no UUID"), std::string::npos);
    EXPECT_THROW(gpc_map_of(builtin.gpus.at(0), "test"), UserError);
}

TEST(GpcMap, TheRecordedH200GivesEightGpcsCoveringItsSixtySixTpcsOnce) {
    const Gpu& gpu = recorded_h200();
    ASSERT_EQ(gpc_map_unavailable_reason(gpu), "");
    const gpupart_gpcs_file map = gpc_map_of(gpu, "snapshot file");
    EXPECT_EQ(gpupart_gpcs_check(&map), 0);
    EXPECT_EQ(map.gpc_count, 8u);
    EXPECT_EQ(map.tpc_count, 66u);
    EXPECT_STREQ(map.source, "snapshot file");
    char uuid[GPUPART_UUID_TEXT_BYTES];
    gpupart_uuid_format(&map.uuid, uuid);
    EXPECT_EQ(std::string(uuid), "GPU-258f535b-999d-058c-3642-767b7fb8d4f0");
    const TpcNumbering numbering = TpcNumbering::of(gpu);
    for (int g = 0; g < 8; ++g) {  // in gpupart's GPC order, as `gpupart topology` numbers them: descriptor bits
        const auto words = numbering.to_bits(gpc_tpcs(gpu, g)).words32();
        for (int w = 0; w < 4; ++w) EXPECT_EQ(map.gpc_tpcs[g][w], words[static_cast<std::size_t>(w)]) << "gpc" << g;
    }
    EXPECT_EQ(map.gpc_tpcs[1][2], (1u << (75 - 64)) | (1u << (78 - 64)) | (1u << (81 - 64)) | (1u << (83 - 64)));
    // Each TPC number's descriptor bit: TPC k is SMs 2k and 2k+1 (TPC 1 = SMs 2-3 = bit 9; TPC 65 = SMs 130-131 = bit 83).
    EXPECT_EQ(map.bit_of_tpc[0], 0u);
    EXPECT_EQ(map.bit_of_tpc[1], 9u);
    EXPECT_EQ(map.bit_of_tpc[8], 1u);
    EXPECT_EQ(map.bit_of_tpc[65], 83u);
    EXPECT_EQ(map.bit_of_tpc[66], GPUPART_GPCS_NO_TPC);
}

TEST(GpcMap, WrittenThenReadBackWhole) {
    TempDir dir;
    const gpupart_gpcs_file map = gpc_map_of(recorded_h200(), "live");
    const std::string path = write_gpc_map(dir.path, map);
    EXPECT_EQ(path, dir.path + "/GPU-258f535b-999d-058c-3642-767b7fb8d4f0.gpcs");
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0644u);
    EXPECT_EQ(info.st_size, static_cast<off_t>(sizeof map));
    gpupart_gpcs_file read{};
    ASSERT_EQ(gpupart_gpcs_read(dir.path.c_str(), ::getuid(), &map.uuid, &read), 0);
    EXPECT_EQ(std::memcmp(&read, &map, sizeof map), 0);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), {}), 1) << "no temporary file left";
}

TEST(GpcMap, AMapIsReadOnlyForTheGpuItNames) {
    TempDir dir;
    gpupart_gpcs_file map = gpc_map_of(recorded_h200(), "live");
    write_gpc_map(dir.path, map);
    // The file of one GPU, renamed to another's name, is refused: its content names the first GPU.
    gpupart_gpu_uuid other = map.uuid;
    other.words[3] ^= 1u;
    char from[512], to[512];
    gpupart_gpcs_path(dir.path.c_str(), &map.uuid, from, sizeof from);
    gpupart_gpcs_path(dir.path.c_str(), &other, to, sizeof to);
    ASSERT_EQ(::rename(from, to), 0);
    gpupart_gpcs_file read{};
    EXPECT_EQ(gpupart_gpcs_read(dir.path.c_str(), ::getuid(), &other, &read), -EPROTO);
    EXPECT_EQ(gpupart_gpcs_read(dir.path.c_str(), ::getuid(), &map.uuid, &read), -ENOENT);
}

TEST(GpcMap, MalformedMapsAreNeitherWrittenNorRead) {
    TempDir dir;
    const gpupart_gpcs_file good = gpc_map_of(recorded_h200(), "live");
    gpupart_gpcs_file overlapping = good;
    for (int w = 0; w < 4; ++w) overlapping.gpc_tpcs[1][w] |= overlapping.gpc_tpcs[0][w];  // gpc0's TPCs in gpc1 too
    gpupart_gpcs_file miscounted = good;
    miscounted.tpc_count = 65;
    gpupart_gpcs_file empty_gpc = good;
    empty_gpc.gpc_count = 9;  // a ninth GPC with no TPC
    gpupart_gpcs_file old_layout = good;
    old_layout.layout_version = 4;
    for (const gpupart_gpcs_file* bad : {&overlapping, &miscounted, &empty_gpc, &old_layout})
        EXPECT_EQ(gpupart_gpcs_write(dir.path.c_str(), bad), -EPROTO);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), {}), 0);
}

}  // namespace
