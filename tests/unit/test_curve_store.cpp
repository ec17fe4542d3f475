// Measured curves on disk (planner/curve_json.hpp, curve_store/curve_store.hpp): round trip, the file
// per identity, and what a corrupt, planted or oversized file gets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <functional>
#include <fstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "curve_store/curve_store.hpp"
#include "curve_store/curve_store_path.hpp"
#include "model/user_error.hpp"

using namespace gpupart;

namespace {

class CurveStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/gpupart-curves-XXXXXX";
        ASSERT_NE(::mkdtemp(pattern), nullptr);
        root_ = pattern;
        store_.dir = root_ + "/state/curves";  // not there yet: the first save makes it
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    static StoredCurve curve(std::string command = "python3 train.py --batch 64") {
        StoredCurve c;
        c.identity = {std::move(command), "alice", "GPU-8a3c0f6e-0000-0000-0000-000000000001"};
        c.total_tpcs = 66;
        c.measured = "2026-11-25T22:00:00Z";
        c.rate_meaning = "kernel launches + graph replays per second";
        for (int m : {8, 16, 33, 66}) c.points.push_back(CurvePoint{m, 1.0 / (0.066 / m + 0.0002), 2.5, 1000u + static_cast<unsigned>(m)});
        c.memory_throughput = 0.35;
        return c;
    }

    void write(const std::string& path, const std::string& text) {
        std::ofstream(path, std::ios::binary) << text;
    }

    std::string load_error(const CurveIdentity& identity) {
        try {
            store_.load(identity);
        } catch (const UserError& e) {
            return e.what();
        }
        return "no error";
    }

    std::string root_;
    CurveStore store_;
};

}  // namespace

TEST_F(CurveStoreTest, SavedCurveLoadsBackExactly) {
    const StoredCurve saved = curve();
    const std::string path = store_.save(saved);
    EXPECT_EQ(path, store_.dir + "/" + curve_file_name(saved.identity));
    const auto loaded = store_.load(saved.identity);
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(*loaded, saved);  // every double exactly: JSON numbers are written to round trip

    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);  // it names the user's commands
    ASSERT_EQ(::stat(store_.dir.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    // Nothing but the curve is left in the directory (the temporary was renamed, not copied).
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(store_.dir), std::filesystem::directory_iterator()), 1);
}

TEST_F(CurveStoreTest, ASecondSaveReplacesTheFirst) {
    StoredCurve c = curve();
    store_.save(c);
    c.points.pop_back();
    c.measured = "2026-11-26T08:00:00Z";
    store_.save(c);
    EXPECT_EQ(store_.load(c.identity)->measured, "2026-11-26T08:00:00Z");
    EXPECT_EQ(store_.list().size(), 1u);
}

TEST_F(CurveStoreTest, OneFilePerIdentity) {
    const CurveIdentity a{"python3 train.py", "alice", "GPU-1"};
    EXPECT_EQ(curve_file_name(a), curve_file_name(CurveIdentity{"python3 train.py", "alice", "GPU-1"}));
    EXPECT_NE(curve_file_name(a), curve_file_name(CurveIdentity{"python3 train.py", "bob", "GPU-1"}));
    EXPECT_NE(curve_file_name(a), curve_file_name(CurveIdentity{"python3 train.py", "alice", "GPU-2"}));
    // The parts are kept apart: moving a character from one to the next is another identity.
    EXPECT_NE(curve_file_name(CurveIdentity{"ab", "c", ""}), curve_file_name(CurveIdentity{"a", "bc", ""}));
    EXPECT_EQ(curve_file_name(a).size(), std::string("curve-0123456789abcdef.json").size());
    EXPECT_FALSE(store_.load(a).has_value());  // nothing saved, not even the directory
}

TEST_F(CurveStoreTest, TheFileCarriesTheFitForReadersButItIsNeverReadBack) {
    const StoredCurve c = curve();
    const std::string path = store_.save(c);
    std::ifstream in(path);
    nlohmann::json doc = nlohmann::json::parse(in);
    EXPECT_NEAR(doc["fit"]["a"].get<double>(), 0.066, 1e-12);
    EXPECT_EQ(doc["class"], "compute");
    doc["fit"]["a"] = 42;  // a hand edit claiming another curve
    doc["class"] = "memory";
    write(path, doc.dump());
    EXPECT_EQ(*store_.load(c.identity), c);
}

TEST_F(CurveStoreTest, CorruptFileIsAnErrorNamingItAndWhatToDo) {
    const StoredCurve c = curve();
    const std::string path = store_.save(c);
    write(path, "{\"format\": \"gpupart-scaling-curve\", \"version\": 1, \"command\": ");  // cut short
    EXPECT_EQ(load_error(c.identity), path + ": it is not valid JSON; this is not a scaling curve gpupart can use: "
                                             "measure the process again (gpupart measure) to replace it, or delete "
                                             "the file");
    write(path, "[1, 2, 3]");
    EXPECT_NE(load_error(c.identity).find("it is not a JSON object"), std::string::npos);
}

TEST_F(CurveStoreTest, WellFormedJsonWithWrongContentIsRefused) {
    const StoredCurve c = curve();
    const std::string path = store_.save(c);
    std::ifstream in(path);
    const nlohmann::json good = nlohmann::json::parse(in);
    auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
        nlohmann::json doc = good;
        edit(doc);
        write(path, doc.dump());
        const std::string error = load_error(c.identity);
        EXPECT_NE(error.find(expected), std::string::npos) << error;
    };
    refused([](nlohmann::json& d) { d["format"] = "gpupart-profile"; }, "'format' is not 'gpupart-scaling-curve'");
    refused([](nlohmann::json& d) { d["version"] = 2; }, "it is version 2, this gpupart reads version 1");
    refused([](nlohmann::json& d) { d.erase("points"); }, "'points' is missing");
    refused([](nlohmann::json& d) { d["points"][0]["rate"] = -5; }, "cannot be negative");
    refused([](nlohmann::json& d) { d["points"][0]["tpcs"] = 80; }, "a point has 80 TPCs, more than the GPU's 66");
    refused([](nlohmann::json& d) { d["points"][0]["tpcs"] = 2.5; }, "'tpcs' must be a whole number");
    refused([](nlohmann::json& d) { d["total_tpcs"] = -1; }, "'total_tpcs' must be from 1 to 1024");
    refused([](nlohmann::json& d) { d["memory_throughput"] = 3; }, "a fraction from 0 to 1");
    refused([](nlohmann::json& d) { d["user"] = 7; }, "'user' must be a string");
}

TEST_F(CurveStoreTest, OversizedFileIsRefusedNotRead) {
    const StoredCurve c = curve();
    const std::string path = store_.save(c);
    write(path, std::string(kMaxCurveBytes + 1, ' '));
    EXPECT_NE(load_error(c.identity).find("scaling curve"), std::string::npos);
    EXPECT_THROW(parse_curve_json(std::string(kMaxCurveBytes + 1, ' '), "x"), UserError);
}

TEST_F(CurveStoreTest, PlantedSymlinkAndFifoAreRefused) {
    const StoredCurve c = curve();
    const std::string path = store_.save(c);
    const std::string elsewhere = root_ + "/elsewhere.json";
    std::filesystem::rename(path, elsewhere);
    std::filesystem::create_symlink(elsewhere, path);
    const std::string link_error = load_error(c.identity);  // O_NOFOLLOW: never read through a link
    EXPECT_NE(link_error.find("is a symbolic link"), std::string::npos) << link_error;
    std::filesystem::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    const std::string error = load_error(c.identity);  // returns at once: a FIFO is never opened for reading
    EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST_F(CurveStoreTest, ListSkipsWhatItCannotReadAndSaysWhy) {
    const StoredCurve a = curve("python3 a.py");
    const StoredCurve b = curve("python3 b.py");
    store_.save(a);
    const std::string b_path = store_.save(b);
    const std::string broken = store_.dir + "/curve-00000000000000ff.json";
    write(broken, "not json");
    write(store_.dir + "/notes.txt", "ignored: not a curve's name");
    // A valid curve under another identity's name (renamed by hand).
    std::filesystem::copy_file(b_path, store_.dir + "/curve-0000000000000001.json");
    std::vector<std::string> problems;
    const std::vector<StoredCurve> curves = store_.list(&problems);
    ASSERT_EQ(curves.size(), 2u);
    EXPECT_TRUE((curves[0] == a && curves[1] == b) || (curves[0] == b && curves[1] == a));
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("its identity does not match its file name"), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find(broken + ": it is not valid JSON"), std::string::npos) << problems[1];
}

TEST_F(CurveStoreTest, MissingDirectoryHoldsNoCurves) {
    std::vector<std::string> problems;
    EXPECT_TRUE(store_.list(&problems).empty());
    EXPECT_TRUE(problems.empty());
}

TEST_F(CurveStoreTest, ACurveWhoseFitFailsIsStillSavedWithWhy) {
    StoredCurve idle = curve();
    for (CurvePoint& p : idle.points) p.rate = 100;  // flat: an idle process
    const std::string path = store_.save(idle);
    std::ifstream in(path);
    const nlohmann::json doc = nlohmann::json::parse(in);
    EXPECT_TRUE(doc["fit"].is_null());
    EXPECT_NE(doc["fit_problem"].get<std::string>().find("does not rise with TPCs"), std::string::npos);
    EXPECT_EQ(*store_.load(idle.identity), idle);
}

// The directory the CLI and the GUI share: XDG_STATE_HOME when it is absolute (the XDG spec says a relative
// one is ignored), else ~/.local/state; neither is one line saying what to set.
TEST(CurveDirectory, FollowsXdgStateHomeElseHome) {
    const auto saved = [](const char* name) { const char* v = std::getenv(name); return v ? std::optional<std::string>(v) : std::nullopt; };
    const auto restore = [](const char* name, const std::optional<std::string>& value) {
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    };
    const auto state = saved("XDG_STATE_HOME");
    const auto home = saved("HOME");
    ::setenv("XDG_STATE_HOME", "/srv/state", 1);
    ::setenv("HOME", "/home/alice", 1);
    EXPECT_EQ(default_curve_directory(), "/srv/state/gpupart/curves");
    ::setenv("XDG_STATE_HOME", "relative/state", 1);
    EXPECT_EQ(default_curve_directory(), "/home/alice/.local/state/gpupart/curves");
    ::unsetenv("XDG_STATE_HOME");
    EXPECT_EQ(default_curve_directory(), "/home/alice/.local/state/gpupart/curves");
    ::unsetenv("HOME");
    EXPECT_THROW(default_curve_directory(), UserError);
    restore("XDG_STATE_HOME", state);
    restore("HOME", home);
}
