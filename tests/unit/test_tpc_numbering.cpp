// TPC numbers (the driver's: TPC k = SMs 2k and 2k+1) and the map to launch-descriptor bits, on the built-in
// H200 (measured: bit 0 holds SMs 0-1, bit 1 SMs 16-17, bit 9 SMs 2-3, bit 83 SMs 130-131), and recordings
// made before gpupart used TPC numbers.
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"
#include "snapshot/snapshot_json.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

}  // namespace

TEST(TpcNumbering, ATpcsNumberIsHalfItsFirstSm) {
    EXPECT_EQ(tpc_number(Tpc{83, {}, {}, {130, 131}, {}, {}, {}}), 65);
    EXPECT_EQ(tpc_number(Tpc{0, {}, {}, {1, 0}, {}, {}, {}}), 0);
    EXPECT_EQ(tpc_number(Tpc{0, {}, {}, {1, 2}, {}, {}, {}}), std::nullopt);  // not a pair 2k, 2k+1
    EXPECT_EQ(tpc_number(Tpc{0, {}, {}, {4}, {}, {}, {}}), std::nullopt);
    EXPECT_EQ(tpc_number(Tpc{0, {}, {}, {}, {}, {}, {}}), std::nullopt);
}

TEST(TpcNumbering, TheH200sMapMatchesTheMeasuredBits) {
    const TpcNumbering map = TpcNumbering::of(h200());
    EXPECT_EQ(map.tpc_count(), 66);
    EXPECT_EQ(map.bit_of(0), 0);
    EXPECT_EQ(map.bit_of(8), 1);
    EXPECT_EQ(map.bit_of(1), 9);
    EXPECT_EQ(map.bit_of(65), 83);
    EXPECT_EQ(map.bit_of(66), std::nullopt);
    EXPECT_EQ(map.number_of(4), std::nullopt);  // a hole
    EXPECT_EQ(map.to_bits(real_tpcs(h200())).to_list(), "0-3,9-16,18-25,27-34,36-43,45-52,54-71,75,78,81,83");
    TpcMask holes;
    EXPECT_EQ(map.to_numbers(TpcMask::range(0, 8), &holes).to_list(), "0,8,16,24");
    EXPECT_EQ(holes.to_list(), "4-8");
    for (int number = 0; number < 66; ++number) EXPECT_EQ(map.number_of(*map.bit_of(number)), number);
}

TEST(TpcNumbering, AGpuWithoutBitsOrPairedSmsHasNoMap) {
    Gpu no_bits = h200();
    for (Tpc& tpc : no_bits.tpcs) tpc.mask_bit.reset(), tpc.mask_bit_note = "run `gpupart probe`";
    std::string why;
    EXPECT_FALSE(TpcNumbering::try_of(no_bits, &why));
    EXPECT_EQ(why, "run `gpupart probe`");
    EXPECT_EQ(real_tpcs(no_bits).count(), 66);  // the numbers are known from the SMs all the same
    Gpu gap = h200();
    gap.tpcs.erase(gap.tpcs.begin());  // TPC 0 gone: 1-65 are not numbered 0-64
    EXPECT_FALSE(TpcNumbering::try_of(gap, &why));
    EXPECT_NE(why.find("no TPC holds SMs 0 and 1"), std::string::npos) << why;
    EXPECT_THROW(TpcNumbering::of(gap), UserError);
    EXPECT_THROW(descriptor_hex(gap, TpcMask::range(1, 2)), UserError);
    EXPECT_EQ(descriptor_hex(h200(), TpcMask::range(0, 1)), "0x201");  // TPCs 0 and 1: bits 0 and 9
}

// A recording of version 1 named processes' masks in descriptor bits: read through its own GPU's map.
TEST(TpcNumbering, AVersionOneRecordingsProcessMasksAreReadAsNumbers) {
    Snapshot snapshot = load_snapshot("builtin:h200");
    Process process;
    process.pid = 42;
    process.command = "serve";
    process.tpc_mask = TpcMask::range(9, 16);  // gpc1's bits, as a version 1 recording wrote them
    snapshot.gpus.at(0).processes.push_back(process);
    nlohmann::ordered_json json = snapshot_to_json(snapshot);
    json["version"] = 1;
    const Snapshot read = snapshot_from_json(json);
    EXPECT_EQ(read.gpus.at(0).processes.at(0).tpc_mask->to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(*read.gpus.at(0).processes.at(0).tpc_mask, gpc_tpcs(h200(), 1));
    // Version 2 (this gpupart) writes and reads numbers as they are.
    json["version"] = 2;
    EXPECT_EQ(snapshot_from_json(json).gpus.at(0).processes.at(0).tpc_mask->to_list(), "9-16");
    // A version 1 recording of a GPU whose TPCs' SMs are not recorded cannot say which TPCs its processes had.
    for (auto& tpc : json["gpus"][0]["tpcs"]) tpc["sms"] = nlohmann::ordered_json::array();
    json["version"] = 1;
    try {
        snapshot_from_json(json);
        ADD_FAILURE() << "a version 1 mask without the map was read";
    } catch (const std::exception& error) {
        EXPECT_NE(std::string(error.what()).find("launch-descriptor bits"), std::string::npos) << error.what();
    }
}
