// Hostile text, terminal escapes: a command line is whatever its owner wrote. One holding ESC, BEL, CR, C1 controls
// or bytes that are not UTF-8 must reach no terminal raw: `list`, `history`, `set`, `check` and `top`
// show it escaped (one_line), and --json keeps it exact (JSON's own escapes), never failing on it.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "hostile_demo_worker.hpp"
#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

// Sets the window title, clears the screen, returns the cursor, then C1 CSI and a byte that is not UTF-8.
const std::string kHostileName = "\x1b]0;PWNED\a\x1b[2J<b>bold</b>\rspoof \xc2\x9b" "31m \xff";

// Where `text` holds something a terminal would act on: a control byte other than newline, a C1
// control, or bytes that are not UTF-8. Empty when it is safe to print.
std::string terminal_hazard(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if ((byte < 0x20 && byte != '\n') || byte == 0x7f) return "control byte " + std::to_string(byte) + " at " + std::to_string(i);
        if (byte < 0x80) continue;
        const std::size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
        if (length == 0 || i + length > text.size()) return "a byte that is not UTF-8 at " + std::to_string(i);
        for (std::size_t k = 1; k < length; ++k)
            if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return "a byte that is not UTF-8 at " + std::to_string(i);
        if (byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) return "a C1 control at " + std::to_string(i);
        // U+202A-U+202E (bidi embeddings and overrides): what follows would be shown reordered.
        if (byte == 0xe2 && static_cast<unsigned char>(text[i + 1]) == 0x80 && static_cast<unsigned char>(text[i + 2]) >= 0xaa &&
            static_cast<unsigned char>(text[i + 2]) <= 0xae)
            return "a bidi override at " + std::to_string(i);
        i += length - 1;
    }
    return "";
}

class HostileTerminalEscapes : public ::testing::Test {
protected:
    ScratchDir scratch;
    std::string registry = scratch / "registry";
    std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + (scratch / "journal")};

    Outcome safe(const std::vector<std::string>& args) {
        const Outcome outcome = gpupart(args, env);
        EXPECT_FALSE(outcome.timed_out);
        EXPECT_EQ(terminal_hazard(outcome.out), "") << "gpupart " << args[0] << " stdout:\n" << outcome.out;
        EXPECT_EQ(terminal_hazard(outcome.err), "") << "gpupart " << args[0] << " stderr:\n" << outcome.err;
        return outcome;
    }
};

TEST_F(HostileTerminalEscapes, ListSetHistoryAndCheckShowTheCommandLineEscaped) {
    DemoWorker worker(registry, kHostileName);
    const Outcome list = safe({"list"});
    EXPECT_EQ(list.exit_code, 0) << list.err;
    EXPECT_NE(list.out.find("gpupart-demo-worker \\x1b]0;PWNED\\x07\\x1b[2J<b>bold</b>\\rspoo"), std::string::npos) << list.out;

    const Outcome set = safe({"set", std::to_string(worker.pid), "gpc2", "--snapshot", "builtin:h200"});
    EXPECT_EQ(set.exit_code, 0) << set.err;
    EXPECT_NE(set.out.find("\\x1b]0;PWNED"), std::string::npos) << set.out;

    const Outcome history = safe({"history"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.out.find("\\x1b]0;PWNED"), std::string::npos) << history.out;

    safe({"check", "--snapshot", "builtin:h200"});
    safe({"set", std::to_string(worker.pid), "gpc2", "--snapshot", "builtin:h200"});  // refused: changes nothing
}

TEST_F(HostileTerminalEscapes, TopShowsTheCommandLineEscapedAtEverySize) {
    DemoWorker worker(registry, kHostileName);
    for (const char* size : {"80x24", "200x50"}) {  // at 80 columns the command is clipped before its escapes
        const Outcome top = safe({"top", "--batch", "--snapshot", "builtin:h200", "--size", size});
        EXPECT_EQ(top.exit_code, 0) << top.err;
        if (std::string(size) == "200x50") {
            EXPECT_NE(top.out.find("\\x1b]0;PWNED"), std::string::npos) << top.out;
        }
    }
}

// `list --format csv`: a command line written to forge CSV rows and columns stays one field of
// one record, escaped as on the terminal.
TEST_F(HostileTerminalEscapes, CsvKeepsAHostileCommandLineOneFieldOfOneRecord) {
    DemoWorker worker(registry, "evil\",\"root\",\"all\"\n4243,root,all,\"x\r\n" + kHostileName);
    const Outcome list = safe({"list", "--format", "csv", "--fields", "pid,user,command,tpcs"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    ASSERT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 2) << "a header and one record:\n" << list.out;
    const std::string record = list.out.substr(list.out.find('\n') + 1);
    EXPECT_EQ(record.rfind(std::to_string(worker.pid) + ",", 0), 0u) << record;
    EXPECT_TRUE(record.ends_with(",\"0,8,16,24,62-65\"\n")) << "the command did not spill into the next field: " << record;  // gpc0
    EXPECT_NE(record.find("\"gpupart-demo-worker evil\"\",\"\"root\"\",\"\"all\"\"\\n4243,root,all,\"\"x\\r\\n\\x1b]0;PWNED"),
              std::string::npos) << record;
}

// C1 controls (CSI) and bidi overrides are valid UTF-8, so JSON would carry them raw: every JSON answer
// writes them as \uNNNN (the same value), as the terminal text writes them \u{NNNN}.
TEST_F(HostileTerminalEscapes, JsonAnswersEscapeC1ControlsAndBidiOverrides) {
    const std::string name = "csi \xc2\x9b" "2J rlo \xe2\x80\xae" "fdp.exe";
    DemoWorker worker(registry, name);
    const Outcome list = safe({"list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    EXPECT_NE(list.out.find("csi \\u009b2J rlo \\u202efdp.exe"), std::string::npos) << list.out;
    EXPECT_EQ(nlohmann::json::parse(list.out)["processes"][0]["command"].get<std::string>(),
              "gpupart-demo-worker " + name + " (simulated workload, no GPU)");
    ASSERT_EQ(safe({"set", std::to_string(worker.pid), "gpc2", "--snapshot", "builtin:h200"}).exit_code, 0);
    const Outcome history = safe({"history", "--json"});
    ASSERT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.out.find("\\u202e"), std::string::npos) << history.out;
    EXPECT_TRUE(nlohmann::json::accept(history.out)) << history.out;
    // A dry run shows the document for any name given, the name included.
    const Outcome profile = safe({"profile", "save", name, "--dry-run", "--snapshot", "builtin:h200"});
    ASSERT_EQ(profile.exit_code, 0) << profile.err;
    EXPECT_NE(profile.out.find("\"name\": \"csi \\u009b2J rlo \\u202efdp.exe\""), std::string::npos) << profile.out;
}

TEST_F(HostileTerminalEscapes, JsonKeepsTheCommandLineExactAndDoesNotFailOnBytesThatAreNotUtf8) {
    DemoWorker worker(registry, kHostileName);
    // JSON escapes C0 controls, and gpupart C1 controls (\u009b): the value parsed back is exact.
    const Outcome list = gpupart({"list", "--json"}, env);
    ASSERT_EQ(list.exit_code, 0) << list.err;
    const auto json = nlohmann::json::parse(list.out);
    ASSERT_EQ(json["processes"].size(), 1u);
    // Exact but for the byte JSON cannot carry (it becomes U+FFFD): escaped once, by JSON, never by one_line too.
    EXPECT_EQ(json["processes"][0]["command"].get<std::string>(),
              "gpupart-demo-worker \x1b]0;PWNED\a\x1b[2J<b>bold</b>\rspoof \xc2\x9b" "31m \xef\xbf\xbd (simulated workload, no GPU)");
    EXPECT_EQ(list.out.find("\\\\x1b"), std::string::npos) << "escaped twice:\n" << list.out;
}

}  // namespace
}  // namespace gpupart::hostile
