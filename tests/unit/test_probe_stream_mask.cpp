// Verifying the driver's per-stream TPC mask against the probe's scan, on simulated GPUs: one whose stream
// mask bit k drives SMs 2k and 2k+1 (the driver measured on the H200), one that numbers two TPCs the other
// way round, one whose bits follow the descriptor's real bits in order (what we first guessed, and the H200
// showed wrong), one that ignores the field, and one whose field cannot be used.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "probe_fixtures.hpp"
#include "sources/probe_stream_mask.hpp"

using gpupart::StreamMaskLauncher;
using gpupart::StreamMaskUnusable;
using gpupart::verify_stream_mask;
using Disable = std::array<std::uint32_t, 4>;

namespace {

// A GPU whose stream mask number k drives the SMs of descriptor bit order[k]. Every launch is recorded.
class SimulatedStreams : public StreamMaskLauncher {
public:
    SimulatedStreams(std::map<int, std::vector<int>> bit_sms, std::vector<int> order)
        : bit_sms_(std::move(bit_sms)), order_(std::move(order)) {}

    std::vector<int> launch(const Disable& disable, int blocks) override {
        EXPECT_GT(blocks, 0);
        block_counts.push_back(blocks);
        std::set<int> allowed;
        for (int k = 0; k < 128; ++k)
            if ((disable[static_cast<std::size_t>(k / 32)] & (1u << (k % 32))) == 0) allowed.insert(k);
        launches.push_back(allowed);
        std::vector<int> reached;
        for (const int k : allowed) {
            // A number beyond the real TPCs has no SMs: a launch allowing only such numbers would hang.
            if (k >= static_cast<int>(order_.size())) continue;
            const std::vector<int>& sms = bit_sms_.at(order_[static_cast<std::size_t>(k)]);
            reached.insert(reached.end(), sms.begin(), sms.end());
        }
        EXPECT_FALSE(reached.empty()) << "a launch allowed no real TPC: it would never run";
        if (ignores_mask) {
            reached.clear();
            for (const int bit : order_) reached.insert(reached.end(), bit_sms_.at(bit).begin(), bit_sms_.at(bit).end());
        }
        std::sort(reached.begin(), reached.end());
        return reached;
    }

    bool ignores_mask = false;
    std::vector<std::set<int>> launches;
    std::vector<int> block_counts;

private:
    std::map<int, std::vector<int>> bit_sms_;
    std::vector<int> order_;
};

std::vector<int> real_bits(const std::map<int, std::vector<int>>& bit_sms) {
    std::vector<int> bits;
    for (const auto& [bit, sms] : bit_sms)
        if (!sms.empty()) bits.push_back(bit);
    return bits;
}

// The driver's order: stream bit k is the descriptor bit that drives SMs 2k and 2k+1.
std::vector<int> by_sm(const std::map<int, std::vector<int>>& bit_sms) {
    std::vector<int> bits = real_bits(bit_sms);
    std::sort(bits.begin(), bits.end(), [&](int a, int b) { return bit_sms.at(a).front() < bit_sms.at(b).front(); });
    return bits;
}

}  // namespace

TEST(ProbeStreamMask, TpcNumbersAreVerifiedOnTheRecordedH200) {
    const auto bit_sms = gpupart::test::h200_recorded_report().bit_sms;
    const std::vector<int> order = by_sm(bit_sms);
    ASSERT_EQ(order.size(), 66u);
    SimulatedStreams gpu(bit_sms, order);
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, bit_sms, 264);
    EXPECT_TRUE(verdict.verified) << verdict.why;
    EXPECT_EQ(verdict.why, "each of the 66 TPC numbers ran exactly on its SMs (68 launches)");
    EXPECT_EQ(verdict.launches, 68);
    ASSERT_EQ(gpu.launches.size(), 68u);
    EXPECT_EQ(gpu.launches.front().size(), 128u);  // nothing kept out
    for (int k = 0; k < 66; ++k) EXPECT_EQ(gpu.launches[static_cast<std::size_t>(1 + k)], std::set<int>{k});
    EXPECT_EQ(gpu.launches.back(), (std::set<int>{0, 65}));
    EXPECT_EQ(gpu.block_counts.front(), 264);  // every SM must answer
    EXPECT_EQ(gpu.block_counts[1], 8);          // one TPC: 8 blocks show both its SMs
}

TEST(ProbeStreamMask, TwoNumbersTheOtherWayRoundAreNotVerifiedAndSaySo) {
    const auto bit_sms = gpupart::test::h200_recorded_report().bit_sms;
    std::vector<int> order = by_sm(bit_sms);
    std::swap(order[10], order[11]);
    SimulatedStreams gpu(bit_sms, order);
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, bit_sms, 264);
    EXPECT_FALSE(verdict.verified);
    const int bit = by_sm(bit_sms)[10];
    EXPECT_EQ(verdict.why, "stream mask TPC 10 (descriptor bit " + std::to_string(bit) + ") ran on SMs 22,23, not on SMs 20,21");
    EXPECT_EQ(verdict.launches, 12);  // stops at the first mismatch
}

// The H200's answer to our first guess: its stream bit 1 ran on SMs 2,3, not on descriptor bit 1's 16,17.
TEST(ProbeStreamMask, BitsInDescriptorOrderAreNotTheTpcNumbers) {
    const auto bit_sms = gpupart::test::h200_recorded_report().bit_sms;
    SimulatedStreams gpu(bit_sms, real_bits(bit_sms));
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, bit_sms, 264);
    EXPECT_FALSE(verdict.verified);
    EXPECT_EQ(verdict.why, "stream mask TPC 1 (descriptor bit 9) ran on SMs 16,17, not on SMs 2,3");
}

TEST(ProbeStreamMask, ABitWhoseSmsAreNoPairIsNotVerifiedAndLaunchesNothing) {
    auto bit_sms = gpupart::test::h200_recorded_report().bit_sms;
    bit_sms[0] = {0};
    SimulatedStreams gpu(bit_sms, {});
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, bit_sms, 264);
    EXPECT_FALSE(verdict.verified);
    EXPECT_EQ(verdict.why, "descriptor bit 0 drives SMs 0, not one pair 2k,2k+1: the TPCs have no numbers to check a stream "
                           "mask against");
    EXPECT_TRUE(gpu.launches.empty());
}

TEST(ProbeStreamMask, AFieldTheDriverIgnoresIsNotVerified) {
    const auto bit_sms = gpupart::test::h200_recorded_report().bit_sms;
    SimulatedStreams gpu(bit_sms, by_sm(bit_sms));
    gpu.ignores_mask = true;
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, bit_sms, 264);
    EXPECT_FALSE(verdict.verified);
    EXPECT_NE(verdict.why.find("stream mask TPC 0 (descriptor bit 0) ran on SMs 0,1,2,3,"), std::string::npos)
        << verdict.why;
}

TEST(ProbeStreamMask, AnUnusableFieldIsAVerdictNotAnError) {
    class Unusable : public StreamMaskLauncher {
    public:
        std::vector<int> launch(const Disable&, int) override {
            throw StreamMaskUnusable("a fresh stream holds 0x1 0 0 0 0 at offset 0x51c, not an empty mask");
        }
    } gpu;
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, gpupart::test::h200_recorded_report().bit_sms, 264);
    EXPECT_FALSE(verdict.verified);
    EXPECT_EQ(verdict.why, "a fresh stream holds 0x1 0 0 0 0 at offset 0x51c, not an empty mask");
}

TEST(ProbeStreamMask, AScanWithNoRealTpcLaunchesNothing) {
    class NeverCalled : public StreamMaskLauncher {
    public:
        std::vector<int> launch(const Disable&, int) override {
            ADD_FAILURE() << "launched without a real TPC";
            return {};
        }
    } gpu;
    const gpupart::StreamMaskVerdict verdict = verify_stream_mask(gpu, {{0, {}}, {1, {}}}, 4);
    EXPECT_FALSE(verdict.verified);
    EXPECT_EQ(verdict.why, "the scan found 0 real TPCs, numbered up to -1: a stream mask holds numbers 0 to 127");
}
