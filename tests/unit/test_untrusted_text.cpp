// The two readers of untrusted input every front end shares: one_line (strings from other processes
// and shared files, shown on a terminal or in Qt) and parse_pid (a process id, strictly).
#include <gtest/gtest.h>

#include "model/pid.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

TEST(OneLine, EscapesEveryControlByteAndKeepsPrintableText) {
    EXPECT_EQ(one_line("python3 serve.py --port 80"), "python3 serve.py --port 80");
    EXPECT_EQ(one_line("\x1b]0;PWNED\a\x1b[2J"), "\\x1b]0;PWNED\\x07\\x1b[2J");
    EXPECT_EQ(one_line("a\nb\rc\td\x7f"), "a\\nb\\rc\\td\\x7f");
    EXPECT_EQ(one_line("<b>bold</b> & \\x1b"), "<b>bold</b> & \\x1b");  // HTML is Qt's to escape; backslashes kept
}

TEST(OneLine, KeepsUtf8ButEscapesBytesThatAreNotUtf8) {
    EXPECT_EQ(one_line("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
    EXPECT_EQ(one_line("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(one_line("\xc3"), "\\xc3");                  // cut short
    EXPECT_EQ(one_line("\xc0\xaf"), "\\xc0\\xaf");         // overlong '/'
    EXPECT_EQ(one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
    EXPECT_EQ(one_line("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

// What every --json answer goes through: the characters one_line writes \u{NNNN} become JSON's \uNNNN,
// the same value when parsed; everything else (other UTF-8, what the JSON writer escaped) is kept.
TEST(EscapeHiddenInJson, WritesC1ControlsAndBidiCharactersAsJsonEscapes) {
    EXPECT_EQ(escape_hidden_in_json("{\"c\": \"\xc2\x9b" "2J ls \xe2\x80\xae" "txt \xe2\x81\xa6 \xd8\x9c\"}"),
              "{\"c\": \"\\u009b2J ls \\u202etxt \\u2066 \\u061c\"}");
    EXPECT_EQ(escape_hidden_in_json("[\"caf\xc3\xa9 \xc2\xa0 \\u001b\"]"), "[\"caf\xc3\xa9 \xc2\xa0 \\u001b\"]");
}

TEST(OneLine, EscapesC1ControlsAndBidiOverrides) {
    EXPECT_EQ(one_line("\xc2\x9b" "31m"), "\\u{009b}31m");  // CSI on terminals that take 8-bit controls
    EXPECT_EQ(one_line("ls \xe2\x80\xae" "txt.exe"), "ls \\u{202e}txt.exe");
    EXPECT_EQ(one_line("\xc2\xa0"), "\xc2\xa0");  // a no-break space is text
}

TEST(OneLine, IsIdempotentSoEscapingTwiceOnTheWayIsHarmless) {
    const std::string hostile = "\x1b]0;x\a \xff \xc2\x9b \xe2\x80\xae \\ <i>";
    EXPECT_EQ(one_line(one_line(hostile)), one_line(hostile));
}

TEST(OneLine, ClipsAtShownCharactersNeverInsideOne) {
    EXPECT_EQ(one_line("abcdef", 4), "abcd");
    EXPECT_EQ(one_line("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xc3\xa9");
    EXPECT_EQ(one_line("ab\x1b" "cd", 4), "ab");        // the escape "\x1b" does not fit whole: left out
    EXPECT_EQ(one_line("ab\x1b" "cd", 6), "ab\\x1b");
    EXPECT_EQ(one_line("short", 60), "short");
}

TEST(ValidUtf8, ReplacesOnlyBytesThatAreNotUtf8) {
    EXPECT_EQ(valid_utf8("caf\xc3\xa9 \x1b[2J"), "caf\xc3\xa9 \x1b[2J");  // exact: JSON escapes the rest
    EXPECT_EQ(valid_utf8("a\xff" "b\xc3"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}

TEST(ParsePid, TakesPlainDecimal) {
    EXPECT_EQ(parse_pid("1"), 1);
    EXPECT_EQ(parse_pid("123"), 123);
    EXPECT_EQ(parse_pid("4194304"), 4194304);
}

TEST(ParsePid, RefusesEverythingElseWithOneLine) {
    for (const char* text : {"", " 123", "123 ", "+123", "-1", "0", "00", "0123", "0x4a02", "123abc", "12.0", "1e3",
                             "4194305", "99999999999999999999999", "\xd9\xa1\xd9\xa2", "12\n3"}) {
        try {
            parse_pid(text);
            ADD_FAILURE() << "'" << text << "' was taken";
        } catch (const UserError& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find("is not a process id"), std::string::npos) << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        }
    }
}

TEST(PidProblem, NamesNumbersNoProcessCanHave) {
    EXPECT_FALSE(pid_problem(1));
    EXPECT_FALSE(pid_problem(kPidMax));
    EXPECT_TRUE(pid_problem(0));
    EXPECT_TRUE(pid_problem(-1));
    EXPECT_TRUE(pid_problem(kPidMax + 1));
}

}  // namespace
}  // namespace gpupart
