// `--format csv` (report/csv_text.hpp): RFC 4180 quoting, and text from other processes (command lines)
// that can never add a row or a column, nor reach a terminal unescaped.
#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "report/csv_text.hpp"

namespace gpupart {
namespace {

// A minimal RFC 4180 reader, to check what a script's CSV parser would see.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false, row_open = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field), field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field), field.clear();
            rows.emplace_back();
            row_open = false;
            continue;
        } else {
            field += c;
        }
        row_open = true;
    }
    if (row_open) rows.back().push_back(field);
    else rows.pop_back();
    return rows;
}

TEST(CsvText, PlainFieldsAreWrittenAsTheyAre) {
    EXPECT_EQ(csv_field("4242"), "4242");
    EXPECT_EQ(csv_field("python3 serve.py --port 80"), "python3 serve.py --port 80");
    EXPECT_EQ(csv_field(""), "");
    EXPECT_EQ(csv_record({"1", "alice", "0-3"}), "1,alice,0-3\n");
}

TEST(CsvText, CommasQuotesAndEdgeSpacesAreQuotedAsRfc4180Says) {
    EXPECT_EQ(csv_field("0-3,9-16"), "\"0-3,9-16\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field(" padded "), "\" padded \"");
}

TEST(CsvText, ControlBytesAreEscapedAsOnTheTerminal) {
    EXPECT_EQ(csv_field("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(csv_field("\x1b]0;PWNED\a"), "\\x1b]0;PWNED\\x07");
    EXPECT_EQ(csv_field("ls \xe2\x80\xae" "txt.exe"), "ls \\u{202e}txt.exe");
}

TEST(CsvText, AHostileCommandLineStaysOneFieldOfOneRecord) {
    // What a process may put in its own command line to forge rows or columns in someone's report.
    const std::string hostile = "evil\",\"root\",\"0-65\"\n4243,root,all,\"injected\r\n\x1b[2J,\"\"";
    const std::string csv = csv_record({"pid", "user", "command"}) + csv_record({"4242", "mallory", hostile});
    const auto rows = parse_csv(csv);
    ASSERT_EQ(rows.size(), 2u) << csv;
    ASSERT_EQ(rows[1].size(), 3u) << csv;
    EXPECT_EQ(rows[1][0], "4242");
    EXPECT_EQ(rows[1][1], "mallory");
    EXPECT_EQ(rows[1][2], one_line(hostile));  // the field reads back as the terminal shows it
    EXPECT_EQ(csv.find('\r'), std::string::npos);
    EXPECT_EQ(csv.find('\x1b'), std::string::npos);
}

TEST(CsvText, FormatIsCsvWithOrWithoutHeader) {
    EXPECT_TRUE(parse_csv_format("csv").header);
    EXPECT_FALSE(parse_csv_format("csv,noheader").header);
    EXPECT_FALSE(parse_csv_format("noheader,csv").header);
    EXPECT_FALSE(parse_csv_format("csv, noheader").header);
    EXPECT_THROW(parse_csv_format("json"), UserError);
    EXPECT_THROW(parse_csv_format("noheader"), UserError);
    EXPECT_THROW(parse_csv_format("csv,nounits"), UserError);
    EXPECT_THROW(parse_csv_format("csv,csv"), UserError);
    EXPECT_THROW(parse_csv_format(""), UserError);
}

TEST(CsvText, FieldsAreChosenInTheOrderNamedAndUnknownOnesListTheKnown) {
    const std::vector<std::string> known{"pid", "user", "tpcs", "command"};
    EXPECT_EQ(select_csv_fields("tpcs,pid", known), (std::vector<std::size_t>{2, 0}));
    EXPECT_EQ(select_csv_fields("pid, user", known), (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(select_csv_fields("pid,pid", known), (std::vector<std::size_t>{0, 0}));
    try {
        select_csv_fields("pid,gpu_util", known);
        FAIL() << "an unknown field was accepted";
    } catch (const UserError& error) {
        EXPECT_STREQ(error.what(), "unknown field 'gpu_util': known fields are pid,user,tpcs,command");
    }
    EXPECT_THROW(select_csv_fields("", known), UserError);
    EXPECT_THROW(select_csv_fields("pid,", known), UserError);
    EXPECT_THROW(select_csv_fields("pid\n,user", known), UserError);
}

}  // namespace
}  // namespace gpupart
