#include <gtest/gtest.h>

#include "model/tpc_mask.hpp"

using gpupart::TpcMask;

TEST(TpcMask, EmptyByDefault) {
    TpcMask mask;
    EXPECT_TRUE(mask.empty());
    EXPECT_EQ(mask.count(), 0);
    EXPECT_EQ(mask.to_list(), "");
    EXPECT_EQ(mask.to_hex(), "0x0");
}

TEST(TpcMask, SetTestAndCountAcrossBothWords) {
    TpcMask mask;
    mask.set(0);
    mask.set(63);
    mask.set(64);
    mask.set(127);
    EXPECT_TRUE(mask.test(0));
    EXPECT_TRUE(mask.test(63));
    EXPECT_TRUE(mask.test(64));
    EXPECT_TRUE(mask.test(127));
    EXPECT_FALSE(mask.test(1));
    EXPECT_FALSE(mask.test(128));
    EXPECT_FALSE(mask.test(-1));
    EXPECT_EQ(mask.count(), 4);
    EXPECT_EQ(mask.bits(), (std::vector<int>{0, 63, 64, 127}));
    mask.set(63, false);
    EXPECT_FALSE(mask.test(63));
}

TEST(TpcMask, SetOutsideWidthThrows) {
    TpcMask mask;
    EXPECT_THROW(mask.set(128), std::out_of_range);
    EXPECT_THROW(mask.set(-1), std::out_of_range);
    EXPECT_THROW(TpcMask::range(5, 3), std::out_of_range);
    EXPECT_THROW(TpcMask::range(0, 128), std::out_of_range);
}

TEST(TpcMask, ListFormCollapsesRanges) {
    TpcMask mask = TpcMask::range(0, 3) | TpcMask::range(9, 16);
    mask.set(75);
    mask.set(127);
    EXPECT_EQ(mask.to_list(), "0-3,9-16,75,127");
}

TEST(TpcMask, HexFormIsLowestBitFirst) {
    EXPECT_EQ(TpcMask::range(0, 3).to_hex(), "0xf");
    EXPECT_EQ(TpcMask::range(64, 67).to_hex(), "0xf0000000000000000");
    EXPECT_EQ(TpcMask::range(0, 3).to_hex_padded(), "0x0000000000000000000000000000000f");
    EXPECT_EQ(TpcMask::range(0, 127).to_hex_padded(), "0xffffffffffffffffffffffffffffffff");
}

TEST(TpcMask, HexRoundTrips) {
    TpcMask mask = TpcMask::range(9, 16) | TpcMask::range(75, 83);
    EXPECT_EQ(TpcMask::parse_hex(mask.to_hex()), mask);
    EXPECT_EQ(TpcMask::parse_hex(mask.to_hex_padded()), mask);
    EXPECT_EQ(TpcMask::parse_hex("0XF"), TpcMask::range(0, 3));
    EXPECT_EQ(TpcMask::parse_hex("0xffff_0000"), TpcMask::range(16, 31));
}

TEST(TpcMask, HexRejectsGarbageAndOverflow) {
    EXPECT_FALSE(TpcMask::parse_hex("0x"));
    EXPECT_FALSE(TpcMask::parse_hex("ff"));
    EXPECT_FALSE(TpcMask::parse_hex("0xfg"));
    EXPECT_FALSE(TpcMask::parse_hex("0x_f"));
    EXPECT_FALSE(TpcMask::parse_hex("0xf_"));
    EXPECT_FALSE(TpcMask::parse_hex("0x1" + std::string(32, '0')));  // bit 128
    EXPECT_TRUE(TpcMask::parse_hex("0x0000" + std::string(32, 'f')));  // leading zeros are fine
}

TEST(TpcMask, DescriptorWordsAreLowestFirst) {
    TpcMask mask;
    mask.set(0);
    mask.set(33);
    mask.set(64);
    mask.set(127);
    const auto words = mask.words32();
    EXPECT_EQ(words[0], 0x1u);
    EXPECT_EQ(words[1], 0x2u);
    EXPECT_EQ(words[2], 0x1u);
    EXPECT_EQ(words[3], 0x80000000u);
}

TEST(TpcMask, BitOperations) {
    const TpcMask a = TpcMask::range(0, 7);
    const TpcMask b = TpcMask::range(4, 11);
    EXPECT_EQ((a & b), TpcMask::range(4, 7));
    EXPECT_EQ((a | b), TpcMask::range(0, 11));
    EXPECT_EQ((~TpcMask()).count(), 128);
    EXPECT_EQ((a & ~b), TpcMask::range(0, 3));
}
