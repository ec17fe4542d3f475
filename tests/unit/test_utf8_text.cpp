// valid_utf8 (user_error.hpp): what another process wrote becomes text JSON can carry, well-formed text is unchanged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/user_error.hpp"

using gpupart::valid_utf8;

TEST(ValidUtf8, WellFormedTextIsUnchanged) {
    for (const char* text : {"", "python3 serve.py", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x9a\x80 launch", "\x1b]0;x\x07"})
        EXPECT_EQ(valid_utf8(text), text);
}

TEST(ValidUtf8, EveryMalformedByteBecomesOneReplacementCharacter) {
    const std::string fffd = "\xef\xbf\xbd";
    EXPECT_EQ(valid_utf8("a\x9f" "b"), "a" + fffd + "b");                // a lone continuation byte
    EXPECT_EQ(valid_utf8("\xc3"), fffd);                                 // cut short
    EXPECT_EQ(valid_utf8("\xc0\xaf"), fffd + fffd);                      // overlong '/'
    EXPECT_EQ(valid_utf8("\xed\xa0\x80"), fffd + fffd + fffd);           // a UTF-16 surrogate
    EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
    EXPECT_EQ(valid_utf8("\xff"), fffd);
}

TEST(ValidUtf8, AnyBytesCanBeWrittenAsJson) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    EXPECT_THROW((void)nlohmann::json(all).dump(), nlohmann::json::type_error);  // why it exists
    EXPECT_NO_THROW((void)nlohmann::json(valid_utf8(all)).dump());
}
