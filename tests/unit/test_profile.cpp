// Profile files (controller/profile.hpp): text written and read back, errors naming line and field, and rule matching.
#include <gtest/gtest.h>

#include <string>

#include "controller/profile.hpp"
#include "model/user_error.hpp"
#include "../lib/thrown_message.hpp"
#include "profile_test_sample.hpp"

using namespace gpupart;
using gpupart::test::sample;

namespace {

// Lines:                     1
constexpr const char* kValid = R"({
  "format": "gpupart-profile",
  "version": 1,
  "name": "serving",
  "description": "say \"hi\" \\ {[",
  "rules": [
    {
      "match": {
        "exe": "python3"
      },
      "gpu": 0,
      "tpcs": "gpc0-3"
    },
    {
      "match": {"user": "alice", "pid": 1234},
      "tpcs": "8 tpcs"
    }
  ]
}
)";
// rules[0] starts on line 7, its match on 8, exe on 9, gpu 11, tpcs 12; rules[1] on 14, its match on 15.

// kValid with `from` (which must occur exactly once) replaced by `to`.
std::string with(const std::string& from, const std::string& to, std::string text = kValid) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from << " occurs twice";
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::string error_of(const std::string& text, const std::string& file = "t.json") {
    return gpupart::test::thrown_message([&] { parse_profile(text, file); });
}

}  // namespace

TEST(Profile, ParsesTheValidExample) {
    const Profile profile = parse_profile(kValid, "t.json");
    EXPECT_EQ(profile.name, "serving");
    EXPECT_EQ(profile.description, "say \"hi\" \\ {[");
    ASSERT_EQ(profile.rules.size(), 2u);
    EXPECT_EQ(profile.rules[0].match.exe, "python3");
    EXPECT_FALSE(profile.rules[0].match.cmdline);
    EXPECT_EQ(profile.rules[0].tpcs, "gpc0-3");
    EXPECT_EQ(profile.rules[0].line, 7);
    EXPECT_EQ(profile.rules[1].match.user, "alice");
    EXPECT_EQ(profile.rules[1].match.pid, 1234);
    EXPECT_EQ(profile.rules[1].gpu, 0);  // the default
    EXPECT_EQ(profile.rules[1].line, 14);
}

TEST(Profile, RoundTripsThroughItsText) {
    const Profile profile = sample();
    const std::string text = profile_text(profile);
    const Profile again = parse_profile(text, "again.json");
    EXPECT_EQ(again, profile);
    EXPECT_EQ(profile_text(again), text);  // stable
    EXPECT_EQ(again.rules[0].line, 7);
    EXPECT_EQ(again.rules[1].line, 15);
}

TEST(Profile, TextIsStableJsonWithUnsetKeysLeftOut) {
    Profile profile;
    profile.name = "one";
    profile.description = "d";
    ProfileRule rule;
    rule.match.pid = 7;
    rule.tpcs = "all";
    profile.rules = {rule};
    EXPECT_EQ(profile_text(profile), R"({
  "format": "gpupart-profile",
  "version": 2,
  "name": "one",
  "description": "d",
  "rules": [
    {
      "match": {
        "pid": 7
      },
      "gpu": 0,
      "tpcs": "all"
    }
  ]
}
)");
}

TEST(Profile, TextRefusesStringsThatAreNotUtf8) {
    Profile profile;
    profile.name = "x";
    profile.description = "caf\xe9";
    try {
        profile_text(profile);
        FAIL() << "no error";
    } catch (const UserError& error) {
        EXPECT_STREQ(error.what(), "profile 'x': cannot be written as JSON: incomplete UTF-8 string; last byte: 0xE9");
    }
}

TEST(Profile, EmptyRulesAreAllowed) {
    Profile profile;
    profile.name = "empty";
    const std::string text = profile_text(profile);
    EXPECT_NE(text.find("\"rules\": []"), std::string::npos);
    EXPECT_EQ(parse_profile(text, "e.json"), profile);
}

TEST(Profile, ValidNames) {
    EXPECT_TRUE(valid_profile_name("serving"));
    EXPECT_TRUE(valid_profile_name("a.b_c-D9"));
    EXPECT_TRUE(valid_profile_name(std::string(64, 'x')));
    EXPECT_FALSE(valid_profile_name(std::string(65, 'x')));
    EXPECT_FALSE(valid_profile_name(""));
    EXPECT_FALSE(valid_profile_name(".hidden"));
    EXPECT_FALSE(valid_profile_name("a b"));
    EXPECT_FALSE(valid_profile_name("a/b"));
    EXPECT_FALSE(valid_profile_name("caf\xc3\xa9"));
}

TEST(Profile, InvalidJsonNamesTheLine) {
    EXPECT_EQ(error_of("{\n  \"format\": \"gpupart-profile\",\n  \"version\": 1,,\n}"),
              "profile t.json:3: not valid JSON: parse error at line 3, column 16: syntax error while parsing object "
              "key - unexpected ','; expected string literal");
    EXPECT_EQ(error_of("{\n  \"name\": \"a\n\"}"),
              "profile t.json:3: not valid JSON: parse error at line 3, column 0: syntax error while parsing value - "
              "invalid string: control character U+000A (LF) must be escaped to \\u000A or \\n; last read: "
              "'\"a<U+000A>'");
    EXPECT_EQ(error_of("{\n  \"rules\": [\n"),
              "profile t.json:3: not valid JSON: parse error at line 3, column 1: syntax error while parsing value - "
              "unexpected end of input; expected '[', '{', or a literal");
    // nlohmann reports a number too large for a double without a position: gpupart finds it.
    EXPECT_EQ(error_of("{\"description\": \"1e999\",\n \"version\":\n 1e999}"),
              "profile t.json:3: not valid JSON: number overflow parsing '1e999'");
    EXPECT_EQ(error_of("{\"a\": [1, -2.5e10,\n\n 1" + std::string(400, '0') + "]}"),
              "profile t.json:3: not valid JSON: number overflow parsing '1" + std::string(400, '0') + "'");
    EXPECT_EQ(error_of(""), "profile t.json:1: not valid JSON: parse error at line 1, column 1: syntax error while "
                            "parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST(Profile, TheDocumentMustBeAnObject) {
    EXPECT_EQ(error_of("\n[\n]\n"), "profile t.json:2: expected an object, got array");
    EXPECT_EQ(error_of("3"), "profile t.json:1: expected an object, got number");
}

TEST(Profile, FormatAndVersion) {
    EXPECT_EQ(error_of(with("  \"format\": \"gpupart-profile\",\n", "")), "profile t.json:1: field format: missing");
    EXPECT_EQ(error_of(with("\"gpupart-profile\"", "\"gpupart-snapshot\"")),
              "profile t.json:2: field format: is 'gpupart-snapshot', expected 'gpupart-profile'");
    EXPECT_EQ(error_of(with("\"gpupart-profile\"", "7")), "profile t.json:2: field format: expected a string, got number");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\": 3,")),
              "profile t.json:3: field version: 3 is not supported (this gpupart reads version 2; upgrade gpupart)");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\": 0,")),
              "profile t.json:3: field version: 0 is not supported (this gpupart reads version 2)");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\":\n\n \"1\",")),
              "profile t.json:5: field version: expected an integer, got string");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\": 1.0,")),
              "profile t.json:3: field version: expected an integer, got a fractional number");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\": 99999999999,")),
              "profile t.json:3: field version: 99999999999 is too large");
    EXPECT_EQ(error_of(with("\"version\": 1,", "\"version\": -99999999999,")),
              "profile t.json:3: field version: -99999999999 is out of range");
    EXPECT_EQ(error_of(with("  \"version\": 1,\n", "")), "profile t.json:1: field version: missing");
}

TEST(Profile, NameAndDescription) {
    const std::string rule = " is not a profile name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.')";
    EXPECT_EQ(error_of(with("\"serving\"", "\".hidden\"")), "profile t.json:4: field name: '.hidden'" + rule);
    EXPECT_EQ(error_of(with("\"serving\"", "\"a b\"")), "profile t.json:4: field name: 'a b'" + rule);
    EXPECT_EQ(error_of(with("\"serving\"", "\"\"")), "profile t.json:4: field name: ''" + rule);
    EXPECT_EQ(error_of(with("\"serving\"", "null")), "profile t.json:4: field name: expected a string, got null");
    EXPECT_EQ(error_of(with("  \"name\": \"serving\",\n", "")), "profile t.json:1: field name: missing");
    EXPECT_EQ(error_of(with("\"say \\\"hi\\\" \\\\ {[\"", "[\"x\"]")),
              "profile t.json:5: field description: expected a string, got array");
    EXPECT_EQ(error_of(with("  \"description\": \"say \\\"hi\\\" \\\\ {[\",\n", "")),
              "profile t.json:1: field description: missing");
}

TEST(Profile, Rules) {
    EXPECT_EQ(error_of(with("  \"rules\": [", "  \"rulez\": [")), "profile t.json:1: field rules: missing");
    EXPECT_EQ(error_of("{\"format\": \"gpupart-profile\", \"version\": 1, \"name\": \"x\", \"description\": \"\",\n"
                       "\"rules\":\n {}}"),
              "profile t.json:3: field rules: expected an array, got object");
    EXPECT_EQ(error_of(with("    {\n      \"match\": {\"user\"", "    \"x\", {\n      \"match\": {\"user\"")),
              "profile t.json:14: field rules[1]: expected an object, got string");
    EXPECT_EQ(error_of(with("      \"match\": {\n        \"exe\": \"python3\"\n      },\n", "")),
              "profile t.json:7: field rules[0].match: missing");
    EXPECT_EQ(error_of(with("{\"user\": \"alice\", \"pid\": 1234}", "\n\n[]")),
              "profile t.json:17: field rules[1].match: expected an object, got array");
    EXPECT_EQ(error_of(with("{\"user\": \"alice\", \"pid\": 1234}", "{}")),
              "profile t.json:15: field rules[1].match: needs at least one of exe, cmdline, user, pid");
    EXPECT_EQ(error_of(with("      \"tpcs\": \"8 tpcs\"\n", "      \"gpu\": 1\n")),
              "profile t.json:14: field rules[1].tpcs: missing");
    EXPECT_EQ(error_of(with("\"8 tpcs\"", "8")), "profile t.json:16: field rules[1].tpcs: expected a string, got number");
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"gpu\": -1,")), "profile t.json:11: field rules[0].gpu: -1 must not be negative");
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"gpu\": \"0\",")),
              "profile t.json:11: field rules[0].gpu: expected an integer, got string");
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"gpu\": 0.5,")),
              "profile t.json:11: field rules[0].gpu: expected an integer, got a fractional number");
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"gpu\": 0, \"priority\":\n 3,")),
              "profile t.json:12: field rules[0].priority: is not a field of this format version");
}

TEST(Profile, MaskExpressionsAreChecked) {
    EXPECT_EQ(error_of(with("\"gpc0-3\"", "\"gpc\"")), "profile t.json:12: field rules[0].tpcs: mask 'gpc': 'gpc' is not a GPC name (write gpc2 or gpc2-3)");
    EXPECT_EQ(error_of(with("\"8 tpcs\"", "\"\"")),
              "profile t.json:16: field rules[1].tpcs: mask is empty: give TPC numbers (0-3,9-16), a GPC (gpc2), a hex "
              "mask (0xff), a count (8 tpcs) or 'all'");
    // A mask with a newline in it still gives a one-line message.
    const std::string message = error_of(with("\"8 tpcs\"", "\"zz\\nzz\""));
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_TRUE(message.starts_with("profile t.json:16: field rules[1].tpcs: mask 'zz\\nzz'")) << message;
}

TEST(Profile, MatchKeys) {
    EXPECT_EQ(error_of(with("\"python3\"", "3")), "profile t.json:9: field rules[0].match.exe: expected a string, got number");
    EXPECT_EQ(error_of(with("\"python3\"", "\"\"")), "profile t.json:9: field rules[0].match.exe: must not be empty");
    EXPECT_EQ(error_of(with("\"python3\"", "\"/usr/bin/python3\"")),
              "profile t.json:9: field rules[0].match.exe: '/usr/bin/python3' is a path; give the executable's base name");
    EXPECT_EQ(error_of(with("\"exe\": \"python3\"", "\"exe\": \"python3\",\n        \"cmdline\": false")),
              "profile t.json:10: field rules[0].match.cmdline: expected a string, got boolean");
    EXPECT_EQ(error_of(with("\"exe\": \"python3\"", "\"exe\": \"python3\",\n        \"cmdline\": \"\"")),
              "profile t.json:10: field rules[0].match.cmdline: must not be empty");
    EXPECT_EQ(error_of(with("\"alice\"", "1000")), "profile t.json:15: field rules[1].match.user: expected a string, got number");
    EXPECT_EQ(error_of(with("\"alice\"", "\"\"")), "profile t.json:15: field rules[1].match.user: must not be empty");
    EXPECT_EQ(error_of(with("1234", "\"1234\"")), "profile t.json:15: field rules[1].match.pid: expected an integer, got string");
    EXPECT_EQ(error_of(with("1234", "0")),
              "profile t.json:15: field rules[1].match.pid: 0 is not a process id (must be at least 1)");
    EXPECT_EQ(error_of(with("1234", "-5")),
              "profile t.json:15: field rules[1].match.pid: -5 is not a process id (must be at least 1)");
    EXPECT_EQ(error_of(with("1234", "12.5")),
              "profile t.json:15: field rules[1].match.pid: expected an integer, got a fractional number");
    EXPECT_EQ(error_of(with("1234", "4294967296")), "profile t.json:15: field rules[1].match.pid: 4294967296 is too large");
    EXPECT_EQ(error_of(with("\"exe\": \"python3\"", "\"exe\": \"python3\",\n\n        \"uid\": 1000")),
              "profile t.json:11: field rules[0].match.uid: is not a field of this format version");
}

TEST(Profile, UnknownAndRepeatedFields) {
    EXPECT_EQ(error_of(with("  \"version\": 1,\n", "  \"version\": 1,\n  \"comment\": {\"a\": [1, 2]},\n")),
              "profile t.json:4: field comment: is not a field of this format version");
    EXPECT_EQ(error_of(with("  \"version\": 1,\n", "  \"version\": 1,\n  \"name\": \"other\",\n")),
              "profile t.json:5: field name: is given more than once");
    EXPECT_EQ(error_of(with("\"exe\": \"python3\"", "\"exe\": \"python3\",\n        \"exe\": \"bash\"")),
              "profile t.json:10: field rules[0].match.exe: is given more than once");
    // The first unknown field in the text is the one reported, whatever the alphabet says.
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"zz\": 0, \"aa\": 0, \"gpu\": 0,")),
              "profile t.json:11: field rules[0].zz: is not a field of this format version");
    // Repeats inside values the format does not read are not what is wrong with them.
    EXPECT_EQ(error_of(with("  \"version\": 1,\n", "  \"version\": 1,\n  \"x\": {\"a\": 1, \"a\": 2},\n")),
              "profile t.json:4: field x: is not a field of this format version");
}

TEST(Profile, LinesFollowEscapedKeysAndNesting) {
    // "\u0065xe" is "exe": the position index decodes keys as nlohmann does.
    EXPECT_EQ(error_of(with("\"exe\": \"python3\"", "\"\\u0065xe\":\n 5")),
              "profile t.json:10: field rules[0].match.exe: expected a string, got number");
    // Deep values in an unknown field do not confuse what comes after them.
    EXPECT_EQ(error_of(with("  \"version\": 1,\n", "  \"version\": 1,\n  \"x\": [[{\"]\": \"}\"}],\n [\n]],\n"),
                       "t.json"),
              "profile t.json:4: field x: is not a field of this format version");
    EXPECT_EQ(error_of(with("\"8 tpcs\"", "\"8 tpcs\", \"y\": [[[{}]]]\n, \"z\": 1")),
              "profile t.json:16: field rules[1].y: is not a field of this format version");
    // A byte order mark is skipped, as nlohmann skips it.
    EXPECT_EQ(error_of("\xEF\xBB\xBF" + with("\"gpu\": 0,", "\"gpu\": -1,")),
              "profile t.json:11: field rules[0].gpu: -1 must not be negative");
}

TEST(Profile, MessagesNameTheFileOnOneLine) {
    EXPECT_EQ(error_of(with("\"gpu\": 0,", "\"gpu\": -1,"), "/etc/gpupart/profiles/a\nb.json"),
              "profile /etc/gpupart/profiles/a\\nb.json:11: field rules[0].gpu: -1 must not be negative");
}

TEST(ProfileMatch, ExecutableName) {
    ProfileRule rule;
    rule.match.exe = "python3";
    EXPECT_TRUE(rule_matches(rule, {100, 1000, "python3", "python3 serve.py"}));
    EXPECT_FALSE(rule_matches(rule, {100, 1000, "python3.11", "python3.11 serve.py"}));
    EXPECT_FALSE(rule_matches(rule, {100, 1000, "bash", "python3"}));
}

TEST(ProfileMatch, CommandLineGlob) {
    ProfileRule rule;
    rule.match.cmdline = "*serve.py*";
    EXPECT_TRUE(rule_matches(rule, {1, 0, "python3", "python3 serve.py --port 8000"}));
    EXPECT_TRUE(rule_matches(rule, {1, 0, "python3", "serve.py"}));
    EXPECT_FALSE(rule_matches(rule, {1, 0, "python3", "python3 train.py"}));
    rule.match.cmdline = "python3 [st]*.py";
    EXPECT_TRUE(rule_matches(rule, {1, 0, "python3", "python3 train.py"}));
    EXPECT_FALSE(rule_matches(rule, {1, 0, "python3", "python3 eval.py"}));
    rule.match.cmdline = "python3 *";  // flags 0: '*' also matches '/'
    EXPECT_TRUE(rule_matches(rule, {1, 0, "python3", "python3 /srv/app/serve.py"}));
}

TEST(ProfileMatch, UserByNameOrUid) {
    ProfileRule rule;
    rule.match.user = "root";
    EXPECT_TRUE(rule_matches(rule, {1, 0, "x", "x"}));
    EXPECT_FALSE(rule_matches(rule, {1, 4000000000u, "x", "x"}));  // no such user
    rule.match.user = "0";
    EXPECT_TRUE(rule_matches(rule, {1, 0, "x", "x"}));
    rule.match.user = "4000000000";
    EXPECT_TRUE(rule_matches(rule, {1, 4000000000u, "x", "x"}));
    EXPECT_FALSE(rule_matches(rule, {1, 0, "x", "x"}));
}

TEST(ProfileMatch, Pid) {
    ProfileRule rule;
    rule.match.pid = 4242;
    EXPECT_TRUE(rule_matches(rule, {4242, 0, "x", "x"}));
    EXPECT_FALSE(rule_matches(rule, {4243, 0, "x", "x"}));
}

TEST(ProfileMatch, EveryGivenKeyMustHold) {
    ProfileRule rule;
    rule.match.exe = "python3";
    rule.match.cmdline = "*serve*";
    rule.match.user = "0";
    rule.match.pid = 77;
    const ProcessFacts process{77, 0, "python3", "python3 serve.py"};
    EXPECT_TRUE(rule_matches(rule, process));
    for (int broken = 0; broken < 4; ++broken) {
        ProcessFacts other = process;
        if (broken == 0) other.pid = 78;
        if (broken == 1) other.uid = 1;
        if (broken == 2) other.exe = "python";
        if (broken == 3) other.cmdline = "python3 train.py";
        EXPECT_FALSE(rule_matches(rule, other)) << broken;
    }
    EXPECT_FALSE(rule_matches(ProfileRule{}, process));  // a rule that names nothing matches nothing
}

// Version 1 profiles were written when numbers in a mask named launch-descriptor bits: read as those bits,
// so an old profile keeps its TPCs; version 2 (written now) means TPC numbers. GPC names and counts mean
// what they meant.
TEST(Profile, VersionOneMasksAreReadAsTheDescriptorBitsTheyWere) {
    const Profile old = parse_profile(with("\"gpc0-3\"", "\"0-3,gpc5,0x30000\""), "old.json");
    EXPECT_EQ(old.rules.at(0).tpcs, "gpc5,bits:0x3000f");
    EXPECT_EQ(old.rules.at(1).tpcs, "8 tpcs");
    const Profile now = parse_profile(with("\"version\": 1", "\"version\": 2", with("\"gpc0-3\"", "\"0-3,gpc5\"")), "new.json");
    EXPECT_EQ(now.rules.at(0).tpcs, "0-3,gpc5");
    EXPECT_NE(error_of(with("\"version\": 1", "\"version\": 3")).find("this gpupart reads version 2"), std::string::npos);
}
