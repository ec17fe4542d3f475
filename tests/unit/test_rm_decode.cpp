// The RM decoders on their own: raw parameter bytes as the recording printed them, and replies that
// cannot be right (counts past the layout's arrays), which must be decoding errors, never misreads.
#include <gtest/gtest.h>

#include <cstring>

#include "recorded_rm_replies.hpp"
#include "sources/rm_abi.hpp"
#include "sources/rm_client.hpp"
#include "sources/rm_controls.hpp"

using namespace gpupart;
namespace r = gpupart::rm580;

namespace {

const std::string kFixtures = std::string(GPUPART_FIXTURES) + "/h100-rmctrl";

// A control's parameter block holding the recorded raw bytes at its start, zero after.
std::vector<std::byte> block_with(const r::Control& control, const std::string& hex) {
    std::vector<std::byte> params(control.size);
    const auto bytes = test::hex_bytes(hex);
    std::memcpy(params.data(), bytes.data(), bytes.size());
    return params;
}

template <typename T>
void put(std::vector<std::byte>& params, std::size_t at, T value) {
    std::memcpy(params.data() + at, &value, sizeof(T));
}

}  // namespace

TEST(RmDecode, PidsFromTheRecordedBytes) {
    const auto nobody = test::load_recorded_rm(kFixtures, "nobody");
    EXPECT_EQ(r::decode_pids(block_with(r::kGpuGetPids, nobody.blocks.at("PIDS").lines.at(0))), (std::vector<int>{534}));
    const auto root = test::load_recorded_rm(kFixtures, "root");
    EXPECT_EQ(r::decode_pids(block_with(r::kGpuGetPids, root.blocks.at("PIDS").lines.at(0))), (std::vector<int>{533}));
}

TEST(RmDecode, AllocatedChannelsFromTheRecordedBytes) {
    const auto root = test::load_recorded_rm(kFixtures, "root");
    EXPECT_EQ(r::decode_allocated_channels(block_with(r::kFifoGetAllocatedChannels, root.blocks.at("ALLOCCH").lines.at(0))),
              (std::vector<int>{1, 2, 3}));
    auto params = r::allocated_channels_request(5);
    put<std::uint32_t>(params, 4 + 4 * 127, 0x80000000u);  // the last channel id, 4095
    EXPECT_EQ(r::decode_allocated_channels(params), (std::vector<int>{4095}));
}

TEST(RmDecode, RequestsHaveTheExactSizesAndInputs) {
    EXPECT_EQ(r::tpc_mask_request(3).size(), 24u);
    EXPECT_EQ(r::tpc_mask_request(3)[16], std::byte{3});
    EXPECT_EQ(r::num_tpcs_request(7)[0], std::byte{7});
    EXPECT_EQ(r::request(r::kGrGetGlobalSmOrder).size(), 9240u);
    const auto grfs = r::grfs_request({{r::kGrfsChipletGpcMap, 5}, {r::kGrfsTpcMask, 6}});
    EXPECT_EQ(grfs.size(), 1928u);
    EXPECT_EQ(grfs[0], std::byte{2});                 // numQueries
    EXPECT_EQ(grfs[8], std::byte{2});                 // query 0 type
    EXPECT_EQ(grfs[16], std::byte{5});                // query 0 gpcId
    EXPECT_EQ(grfs[28], std::byte{3});                // query 1 type
    EXPECT_EQ(grfs[36], std::byte{6});                // query 1 gpcId
    const auto fifo = r::fifo_info_request({9}, 0x0d);
    EXPECT_EQ(fifo[2052], std::byte{0x0d});
    const auto pids = r::pids_request();
    EXPECT_EQ(pids[4], std::byte{0x80});
    EXPECT_EQ(pids[5], std::byte{0x20});
    EXPECT_EQ(r::copy_engine_type(0), 0x09u);
    EXPECT_EQ(r::copy_engine_type(9), 0x12u);
    EXPECT_EQ(r::copy_engine_type(10), 0x34u);
    EXPECT_EQ(r::copy_engine_type(20), std::nullopt);
}

TEST(RmDecode, SmOrderEntriesAreEighteenBytesOfNineFields) {
    auto params = r::request(r::kGrGetGlobalSmOrder);
    put<std::uint16_t>(params, 9216, 2);
    put<std::uint16_t>(params, 9218, 1);
    // sm 1: gpcId 7, localTpcId 5, localSmId 1, globalTpcId 59, virtualGpcId 7.
    for (auto [field, value] : {std::pair{0, 7}, {1, 5}, {2, 1}, {3, 59}, {4, 7}}) put<std::uint16_t>(params, 18 + 2 * field, static_cast<std::uint16_t>(value));
    const r::SmOrder order = r::decode_sm_order(params);
    ASSERT_EQ(order.entries.size(), 2u);
    EXPECT_EQ(order.tpc_count, 1);
    EXPECT_EQ(order.entries[1].sm, 1);
    EXPECT_EQ(order.entries[1].logical_gpc, 7);
    EXPECT_EQ(order.entries[1].local_tpc, 5);
    EXPECT_EQ(order.entries[1].global_tpc, 59);
    EXPECT_EQ(order.entries[1].virtual_gpc, 7);
}

TEST(RmDecode, CountsPastTheLayoutsArraysAreErrors) {
    auto order = r::request(r::kGrGetGlobalSmOrder);
    put<std::uint16_t>(order, 9216, 513);
    EXPECT_THROW(r::decode_sm_order(order), rm::DecodeError);
    auto engines = r::request(r::kGpuGetEnginesV2);
    put<std::uint32_t>(engines, 0, 85);
    EXPECT_THROW(r::decode_engines(engines), rm::DecodeError);
    auto info = r::request(r::kGrGetInfoV2);
    put<std::uint32_t>(info, 0, 59);
    EXPECT_THROW(r::decode_gr_info(info), rm::DecodeError);
    auto pids = r::request(r::kGpuGetPids);
    put<std::uint32_t>(pids, 8, 951);
    EXPECT_THROW(r::decode_pids(pids), rm::DecodeError);
    EXPECT_THROW(r::decode_gpc_mask(std::vector<std::byte>(8)), rm::DecodeError);  // too short for the field
}

TEST(RmDecode, RunlistIdsTheDriverMarksInvalidAreEmpty) {
    auto params = r::runlist_request({0x01, 0x22});
    put<std::uint32_t>(params, 672, 0);            // GR0: runlist 0
    put<std::uint32_t>(params, 336 + 4, 0xFFFFFFFFu);  // SW: no pri base
    put<std::uint32_t>(params, 672 + 4, 0xFFFFFFFFu);  // and no runlist
    const auto ids = r::decode_runlist_ids(params, 2);
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], std::nullopt);
}

TEST(RmDecode, VersionAndCardReplies) {
    rm::VersionArgs reply;
    reply.reply = 1;
    std::strcpy(reply.version, "580.159.04");
    EXPECT_EQ(decode_version_reply(std::as_bytes(std::span(&reply, 1))), "580.159.04");
    reply.reply = 0;
    EXPECT_THROW(decode_version_reply(std::as_bytes(std::span(&reply, 1))), std::runtime_error);

    rm::CardInfoEntry cards[2];
    cards[1].valid = 1;
    cards[1].pci_domain = 0;
    cards[1].pci_bus = 0x1b;
    cards[1].pci_slot = 0;
    cards[1].pci_function = 0;
    cards[1].gpu_id = 0x1b00;
    cards[1].minor_number = 3;
    const auto decoded = decode_card_info(std::as_bytes(std::span(cards)));
    ASSERT_EQ(decoded.size(), 1u);  // the invalid entry is skipped
    EXPECT_EQ(decoded[0].bus_id, "0000:1b:00.0");
    EXPECT_EQ(decoded[0].minor, 3u);
    EXPECT_EQ(rm::ioctl_request(rm::kEscRmControl, sizeof(rm::ControlArgs)), 0xC020462Au);
    EXPECT_EQ(rm::ioctl_request(rm::kEscCardInfo, 64 * sizeof(rm::CardInfoEntry)), 0xD20046C8u);
    EXPECT_EQ(rm::status_name(0x56), "NV_ERR_NOT_SUPPORTED (0x56)");
}
