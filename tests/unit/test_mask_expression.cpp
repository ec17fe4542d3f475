#include <gtest/gtest.h>

#include "model/mask_expression.hpp"
#include "model/user_error.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;

namespace {
std::vector<MaskTerm> terms_of(const std::string& text) {
    const MaskExpression expression = parse_mask_expression(text);
    EXPECT_TRUE(expression.is_explicit()) << text;
    return std::get<std::vector<MaskTerm>>(expression.value);
}

std::string error_of(const std::string& text) {
    return gpupart::test::thrown_message([&] { parse_mask_expression(text); });
}
}  // namespace

TEST(MaskExpression, ListsAndRanges) {
    const auto terms = terms_of("0-3,9-16, 75");
    ASSERT_EQ(terms.size(), 3u);
    EXPECT_EQ(std::get<BitRange>(terms[0]), (BitRange{0, 3}));
    EXPECT_EQ(std::get<BitRange>(terms[1]), (BitRange{9, 16}));
    EXPECT_EQ(std::get<BitRange>(terms[2]), (BitRange{75, 75}));
}

TEST(MaskExpression, GpcNamesAndRanges) {
    const auto terms = terms_of("gpc2,GPC0-1");
    ASSERT_EQ(terms.size(), 2u);
    EXPECT_EQ(std::get<GpcRange>(terms[0]), (GpcRange{2, 2}));
    EXPECT_EQ(std::get<GpcRange>(terms[1]), (GpcRange{0, 1}));
}

TEST(MaskExpression, HexMixesWithLists) {
    const auto terms = terms_of("0xff,100");
    ASSERT_EQ(terms.size(), 2u);
    EXPECT_EQ(std::get<HexBits>(terms[0]).mask, TpcMask::range(0, 7));
    EXPECT_EQ(std::get<BitRange>(terms[1]), (BitRange{100, 100}));
}

TEST(MaskExpression, CountsSharesAndAll) {
    EXPECT_EQ(std::get<TpcCount>(parse_mask_expression("8 tpcs").value).count, 8);
    EXPECT_EQ(std::get<TpcCount>(parse_mask_expression("8tpc").value).count, 8);
    EXPECT_EQ(std::get<TpcCount>(parse_mask_expression(" 1 TPC ").value).count, 1);
    EXPECT_EQ(std::get<GpcCount>(parse_mask_expression("2 gpcs").value).count, 2);
    EXPECT_DOUBLE_EQ(std::get<SharePercent>(parse_mask_expression("25%").value).percent, 25.0);
    EXPECT_DOUBLE_EQ(std::get<SharePercent>(parse_mask_expression("12.5 %").value).percent, 12.5);
    EXPECT_TRUE(std::holds_alternative<AllTpcs>(parse_mask_expression("ALL").value));
}

TEST(MaskExpression, RefusesMalformedInputWithOneLine) {
    EXPECT_NE(error_of("").find("mask is empty"), std::string::npos);
    EXPECT_NE(error_of("   ").find("mask is empty"), std::string::npos);
    EXPECT_NE(error_of("0-3,,5").find("empty item between commas"), std::string::npos);
    EXPECT_NE(error_of("0-3,").find("empty item"), std::string::npos);
    EXPECT_NE(error_of("5-3").find("runs backwards"), std::string::npos);
    EXPECT_NE(error_of("gpc3-1").find("runs backwards"), std::string::npos);
    EXPECT_NE(error_of("128").find("beyond the 128 TPCs a mask can name"), std::string::npos);
    EXPECT_NE(error_of("0-200").find("beyond the 128 TPCs a mask can name"), std::string::npos);
    EXPECT_NE(error_of("abc").find("'abc' is not a TPC number"), std::string::npos);
    EXPECT_NE(error_of("-3").find("is not a TPC number"), std::string::npos);
    EXPECT_NE(error_of("gpcx").find("not a GPC name"), std::string::npos);
    EXPECT_NE(error_of("0xzz").find("not a hex mask"), std::string::npos);
    EXPECT_NE(error_of("0x1" + std::string(32, '0')).find("not a hex mask"), std::string::npos);
    EXPECT_NE(error_of("0 tpcs").find("count of 0"), std::string::npos);
    EXPECT_NE(error_of("0%").find("more than 0%"), std::string::npos);
    EXPECT_NE(error_of("150%").find("at most 100%"), std::string::npos);
    EXPECT_NE(error_of("x%").find("number and '%'"), std::string::npos);
    EXPECT_NE(error_of("8 sms").find("is not a TPC number"), std::string::npos);
    EXPECT_NE(error_of("99999999999 tpcs").find("too large"), std::string::npos);
    for (const char* bad : {"", "0-3,,5", "5-3", "abc", "0 tpcs"})
        EXPECT_EQ(error_of(bad).find('\n'), std::string::npos) << "error for '" << bad << "' spans lines";
}

TEST(MaskExpression, ErrorNamesTheExpression) {
    EXPECT_EQ(error_of("0-3,zz"), "mask '0-3,zz': 'zz' is not a TPC number, range, GPC or hex mask (examples: 0-3,9-16  gpc2  0xff)");
}
