#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"
#include "snapshot/snapshot_json.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;
using Json = nlohmann::ordered_json;

namespace {

Json h200_json() { return Json::parse(builtin_snapshots().at(0).json); }

std::string error_of_text(const std::string& text) {
    return gpupart::test::thrown_message([&] { parse_snapshot_text(text, "test.json"); });
}

std::string error_of(const Json& document) { return error_of_text(document.dump()); }

class TempDir : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("gpupart-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path dir_;
};

}  // namespace

TEST(SnapshotJson, BuiltinRoundTripsExactly) {
    const Snapshot snapshot = load_snapshot("builtin:h200");
    const std::string text = snapshot_text(snapshot);
    EXPECT_EQ(text, std::string(builtin_snapshots().at(0).json));  // writing is stable byte for byte
    EXPECT_EQ(parse_snapshot_text(text, "again"), snapshot);
}

TEST(SnapshotJson, EveryBuiltinRoundTrips) {
    for (const auto& builtin : builtin_snapshots()) {
        const Snapshot snapshot = load_snapshot(std::string(kBuiltinPrefix) + std::string(builtin.name));
        EXPECT_EQ(parse_snapshot_text(snapshot_text(snapshot), "again"), snapshot) << builtin.name;
    }
}

TEST(SnapshotJson, ProcessesAndUnknownFactsRoundTrip) {
    Snapshot snapshot = load_snapshot("builtin:h200");
    Process process;
    process.pid = 4242;
    process.start_time = 123456789ULL;
    process.uid = 1000;
    process.command = "python3 serve.py --port 8000";
    process.tpc_mask = TpcMask::range(9, 16);
    process.gpu_memory_bytes = unknown_fact<std::uint64_t>("MPS hides clients from NVML", {Source::nvml, "nvml"});
    process.from = {Source::registry, "/run/gpupart/registry"};
    snapshot.gpus[0].processes.push_back(process);
    const Snapshot again = parse_snapshot_text(snapshot_text(snapshot), "again");
    EXPECT_EQ(again, snapshot);
    EXPECT_EQ(again.gpus[0].processes.at(0).tpc_mask->to_list(), "9-16");
}

TEST_F(TempDir, SaveThenLoadFromFile) {
    const Snapshot snapshot = load_snapshot("builtin:h200");
    const std::string path = (dir_ / "h200.json").string();
    save_snapshot(snapshot, path);
    EXPECT_EQ(load_snapshot(path), snapshot);
    // No temporary file is left behind.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), std::filesystem::directory_iterator()), 1);
}

TEST_F(TempDir, SaveIntoMissingDirectoryFailsWithOneLine) {
    const std::string path = (dir_ / "nope" / "x.json").string();
    try {
        save_snapshot(load_snapshot("builtin:h200"), path);
        FAIL() << "expected an error";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find(path + ": cannot write the snapshot"), std::string::npos);
    }
}

TEST_F(TempDir, MissingFileIsOneLineError) {
    try {
        load_snapshot((dir_ / "absent.json").string());
        FAIL() << "expected an error";
    } catch (const UserError& error) {
        EXPECT_EQ(std::string(error.what()), (dir_ / "absent.json").string() + ": cannot open the snapshot: No such file or directory");
    }
}

TEST(SnapshotJson, UnknownBuiltinListsTheKnownOnes) {
    EXPECT_THROW(load_snapshot("builtin:a100"), UserError);
    try {
        load_snapshot("builtin:a100");
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("builtin:h200"), std::string::npos);
    }
}

TEST(SnapshotJson, RejectsInvalidJson) {
    const std::string error = error_of_text("{\"format\": ");
    EXPECT_EQ(error.rfind("snapshot test.json: not valid JSON: parse error", 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(SnapshotJson, RejectsUnknownVersion) {
    Json document = h200_json();
    document["version"] = 3;
    EXPECT_EQ(error_of(document), "snapshot test.json: field version: 3 is not supported (this gpupart reads version 2; upgrade gpupart)");
    document["version"] = 0;
    EXPECT_EQ(error_of(document), "snapshot test.json: field version: 0 is not supported (this gpupart reads version 2)");
    document["version"] = "1";
    EXPECT_EQ(error_of(document), "snapshot test.json: field version: expected an integer, got string");
}

TEST(SnapshotJson, RejectsOtherFormats) {
    Json document = h200_json();
    document["format"] = "something-else";
    EXPECT_EQ(error_of(document), "snapshot test.json: field format: is 'something-else', expected 'gpupart-snapshot'");
    EXPECT_EQ(error_of_text("[]"), "snapshot test.json: field : expected an object, got array");
}

TEST(SnapshotJson, NamesTheFieldThatIsWrong) {
    Json document = h200_json();
    document["gpus"][0]["tpcs"][3]["mask_bit"] = "three";
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].tpcs[3].mask_bit: expected an integer, got string");

    document = h200_json();
    document["gpus"][0]["tpcs"][3].erase("sms");
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].tpcs[3].sms: missing");

    document = h200_json();
    document["gpus"][0]["gpcs"][1]["tpc_slot"] = 9;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].gpcs[1].tpc_slot: is not a field of this format version");

    document = h200_json();
    document["gpus"][0]["sm_count"]["from"]["source"] = "crystal-ball";
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].sm_count.from.source: unknown source 'crystal-ball'");

    document = h200_json();
    document["gpus"][0]["tpcs"][0]["sms"][0] = 1.5;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].tpcs[0].sms[0]: expected an integer, got a fractional number");

    document = h200_json();
    document["gpus"][0]["copy_engines"]["lces"][0]["pce_mask"] = -1;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].copy_engines.lces[0].pce_mask: -1 must not be negative");
}

TEST(SnapshotJson, RejectsInconsistentTopology) {
    Json document = h200_json();
    // Bit 4 is a hole on the H200; claim it is also a TPC.
    document["gpus"][0]["tpcs"][4]["mask_bit"] = 4;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0]: holes[0].mask_bit: bit 4 is listed both as a TPC and as a hole");

    document = h200_json();
    document["gpus"][0]["tpcs"][1]["sms"] = {0, 1};
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0]: tpcs[1].sms: SM 0 belongs to two TPCs");

    document = h200_json();
    document["gpus"][0]["tpcs"][0]["gpc"] = 8;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0]: tpcs[0].gpc: GPC 8 does not exist (8 GPCs)");

    document = h200_json();
    document["gpus"][0]["tpcs"][0]["mask_bit"] = 128;
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0]: tpcs[0].mask_bit: 128 outside 0-127");

    document = h200_json();
    document["gpus"][0]["processes"] = Json::array({Json{{"pid", 1}, {"start_time", nullptr}, {"uid", nullptr}, {"command", "x"},
                                                         {"tpc_mask", "0xf"}, {"tpcs", "0-2"},
                                                         {"gpu_memory_bytes", {{"value", nullptr}, {"from", {{"source", "nvml"}, {"detail", ""}}}}},
                                                         {"from", {{"source", "registry"}, {"detail", ""}}}}});
    EXPECT_EQ(error_of(document), "snapshot test.json: field gpus[0].processes[0].tpcs: does not match tpc_mask");
}

TEST(SnapshotJson, EveryErrorIsOneLine) {
    Json document = h200_json();
    document["gpus"][0]["name"]["value"] = 7;
    const std::string error = error_of(document);
    EXPECT_EQ(error, "snapshot test.json: field gpus[0].name.value: expected a string, got number");
    EXPECT_EQ(error.find('\n'), std::string::npos);
}
