// The probing procedure against simulated GPUs built from recorded maps. The simulation refuses (and
// fails the test on) any launch that allows only holes: on a real GPU that kernel would never run.
#include <gtest/gtest.h>

#include <set>

#include "model/user_error.hpp"
#include "probe_fixtures.hpp"
#include "sources/probe_scan.hpp"
#include "../lib/thrown_message.hpp"

using gpupart::TpcMask;

namespace {

class SimulatedGpu : public gpupart::MaskLauncher {
public:
    SimulatedGpu(std::map<int, std::vector<int>> bit_sms, int sm_count) : bit_sms_(std::move(bit_sms)), sm_count_(sm_count) {}

    std::vector<int> launch(const std::optional<TpcMask>& allowed, const TpcMask& known_real, int blocks) override {
        ++launches;
        std::set<int> reached;
        if (!allowed) {
            for (int sm = 0; sm < sm_count_; ++sm) reached.insert(sm);
            return {reached.begin(), reached.end()};
        }
        // What the caller declares real must include a truly real bit, or the shim's check means nothing.
        bool declared_real_is_real = false;
        for (int bit : (*allowed & known_real).bits()) declared_real_is_real |= !bit_sms_[bit].empty();
        EXPECT_TRUE(declared_real_is_real) << "mask " << allowed->to_list() << " declares no truly real TPC";
        for (int bit : allowed->bits())
            for (int sm : bit_sms_[bit]) reached.insert(sm);
        if (reached.empty()) ADD_FAILURE() << "launch allowing only holes (" << allowed->to_list() << ") would hang";
        EXPECT_GE(blocks, static_cast<int>(reached.size())) << "too few blocks to reach every allowed SM";
        return {reached.begin(), reached.end()};
    }
    int launches = 0;

private:
    std::map<int, std::vector<int>> bit_sms_;
    int sm_count_;
};

std::map<int, std::vector<int>> h200_bits() { return gpupart::test::h200_recorded_report().bit_sms; }

std::string error_of(SimulatedGpu& gpu, int sm_count, int width) {
    return gpupart::test::thrown_message([&] { gpupart::scan_mask_bits(gpu, sm_count, width); }, "(accepted)");
}

}  // namespace

TEST(ProbeScan, FindsTheRecordedH200MapWithoutEverAllowingOnlyHoles) {
    SimulatedGpu gpu(h200_bits(), 132);
    const gpupart::ProbeScan scan = gpupart::scan_mask_bits(gpu, 132, 128);
    EXPECT_EQ(scan.anchor_bit, 0);
    EXPECT_EQ(scan.bit_sms, h200_bits());
    EXPECT_EQ(scan.launches, 129);  // unmasked, leave-bit-0-out, then bits 1..127 with the anchor
    EXPECT_EQ(gpu.launches, scan.launches);
}

TEST(ProbeScan, SearchesForAnAnchorWhenTheLowBitsAreHoles) {
    std::map<int, std::vector<int>> shifted;  // the H200 map moved up by 5 bits: bits 0-4 are holes
    for (const auto& [bit, sms] : h200_bits())
        if (bit + 5 < 128) shifted[bit + 5] = sms;
    for (int bit = 0; bit < 5; ++bit) shifted[bit] = {};
    SimulatedGpu gpu(shifted, 132);
    const gpupart::ProbeScan scan = gpupart::scan_mask_bits(gpu, 132, 128);
    EXPECT_EQ(scan.anchor_bit, 5);
    EXPECT_EQ(scan.bit_sms, shifted);
    EXPECT_EQ(scan.launches, 1 + 6 + 122);
}

TEST(ProbeScan, WorksOnA64BitDescriptor) {
    std::map<int, std::vector<int>> bits;
    for (int bit = 0; bit < 64; ++bit) bits[bit] = bit < 20 ? std::vector<int>{bit} : std::vector<int>{};
    SimulatedGpu gpu(bits, 20);
    const gpupart::ProbeScan scan = gpupart::scan_mask_bits(gpu, 20, 64);
    EXPECT_EQ(scan.bit_sms, bits);
}

TEST(ProbeScan, RefusesWhatItCannotProbeSafely) {
    SimulatedGpu tiny({{0, {0, 1}}}, 2);
    EXPECT_EQ(error_of(tiny, 2, 128), "2 SMs: the probe needs at least two TPCs to probe without risking a hang");
    EXPECT_EQ(tiny.launches, 0);
    SimulatedGpu wide(h200_bits(), 132);
    EXPECT_EQ(error_of(wide, 132, 96), "mask width 96 is neither 64 nor 128");
    // Under MPS every client sees SM ids from 0: an unmasked launch reaches fewer ids than the GPU has SMs.
    SimulatedGpu virtualised(h200_bits(), 18);
    EXPECT_EQ(error_of(virtualised, 132, 128),
              "an unmasked launch reached 18 distinct SM ids, not 0-131: %smid is not the physical SM (is MPS serving "
              "this process? it virtualises SM ids)");
}
