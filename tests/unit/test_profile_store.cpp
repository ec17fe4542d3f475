// The profile store (controller/profile_store.hpp): saving, loading, listing and deleting user and system profiles.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile.hpp"
#include "controller/profile_store.hpp"
#include "../lib/thrown_message.hpp"
#include "profile_test_sample.hpp"

using namespace gpupart;
using gpupart::test::sample;

namespace {

class ProfileStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("gpupart-profile-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_ / "etc");
        store_.user_dir = (dir_ / "home" / ".config" / "gpupart" / "profiles").string();
        store_.system_dir = (dir_ / "etc").string();
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    void write_system(const std::string& file, const std::string& text) {
        std::ofstream(dir_ / "etc" / file) << text;
    }
    static Profile named(const std::string& name, const std::string& description = "") {
        Profile profile = sample();
        profile.name = name;
        profile.description = description;
        return profile;
    }
    std::string error_of(auto&& action) {
        return gpupart::test::thrown_message([&] { action(); });
    }
    std::vector<std::string> names(const std::vector<StoredProfile>& stored) {
        std::vector<std::string> out;
        for (const auto& each : stored) out.push_back(each.profile.name + (each.system ? " (system)" : ""));
        return out;
    }

    std::filesystem::path dir_;
    ProfileStore store_;
};

}  // namespace

TEST_F(ProfileStoreTest, SaveLoadListRemove) {
    const std::string path = store_.save(named("serving", "first"), false);
    EXPECT_EQ(path, store_.user_dir + "/serving.json");
    struct stat info {};
    ASSERT_EQ(::stat(store_.user_dir.c_str(), &info), 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(info.st_mode & 0777, 0755 & ~mask);
    // Nothing but the profile is left in the directory.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(store_.user_dir), std::filesystem::directory_iterator()), 1);

    const StoredProfile loaded = store_.load("serving");
    EXPECT_EQ(loaded.profile, named("serving", "first"));
    EXPECT_EQ(loaded.path, path);
    EXPECT_FALSE(loaded.system);
    EXPECT_EQ(store_.load(path).profile, loaded.profile);  // by path

    store_.save(named("training"), false);
    std::vector<std::string> problems;
    EXPECT_EQ(names(store_.list(&problems)), (std::vector<std::string>{"serving", "training"}));
    EXPECT_TRUE(problems.empty());

    EXPECT_EQ(store_.remove("serving"), path);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_EQ(names(store_.list()), (std::vector<std::string>{"training"}));
    EXPECT_EQ(error_of([&] { store_.remove("serving"); }),
              "profile 'serving': not found in " + store_.user_dir);
    EXPECT_EQ(error_of([&] { store_.load("serving"); }),
              "profile 'serving': not found in " + store_.user_dir + " or " + store_.system_dir +
                  " (there are: training)");
}

TEST_F(ProfileStoreTest, RefusesToOverwriteUnlessAsked) {
    const std::string path = store_.save(named("serving", "first"), false);
    EXPECT_EQ(error_of([&] { store_.save(named("serving", "second"), false); }),
              "profile 'serving' already exists (" + path + "); refusing to replace it");
    EXPECT_EQ(store_.load("serving").profile.description, "first");
    EXPECT_EQ(store_.save(named("serving", "second"), true), path);
    EXPECT_EQ(store_.load("serving").profile.description, "second");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(store_.user_dir), std::filesystem::directory_iterator()), 1);
}

TEST_F(ProfileStoreTest, UserProfilesShadowSystemOnes) {
    write_system("serving.json", profile_text(named("serving", "system")));
    write_system("batch.json", profile_text(named("batch", "system")));
    EXPECT_TRUE(store_.load("serving").system);
    EXPECT_EQ(store_.load("serving").path, store_.system_dir + "/serving.json");

    store_.save(named("serving", "mine"), false);  // shadows; the system file is untouched
    const StoredProfile loaded = store_.load("serving");
    EXPECT_FALSE(loaded.system);
    EXPECT_EQ(loaded.profile.description, "mine");
    EXPECT_EQ(names(store_.list()), (std::vector<std::string>{"batch (system)", "serving"}));

    store_.remove("serving");  // the system profile shows again
    EXPECT_EQ(store_.load("serving").profile.description, "system");
    EXPECT_EQ(names(store_.list()), (std::vector<std::string>{"batch (system)", "serving (system)"}));
}

TEST_F(ProfileStoreTest, RefusesToDeleteASystemProfile) {
    write_system("serving.json", profile_text(named("serving")));
    EXPECT_EQ(error_of([&] { store_.remove("serving"); }),
              "profile 'serving' is a system profile (" + store_.system_dir +
                  "/serving.json); only your own profiles in " + store_.user_dir + " can be deleted");
    EXPECT_TRUE(std::filesystem::exists(dir_ / "etc" / "serving.json"));
    EXPECT_EQ(error_of([&] { store_.remove("../etc/serving"); }),
              "profile '../etc/serving': give a profile name, not a file");
}

TEST_F(ProfileStoreTest, MalformedFilesAreReportedAndSkipped) {
    store_.save(named("good"), false);
    write_system("broken.json", "{\n  \"format\": \"gpupart-profile\",\n  \"version\": 3\n}\n");
    write_system("misnamed.json", profile_text(named("other")));
    write_system("notes.txt", "not a profile");
    std::vector<std::string> problems;
    EXPECT_EQ(names(store_.list(&problems)), (std::vector<std::string>{"good"}));
    EXPECT_EQ(problems, (std::vector<std::string>{
                            "profile " + store_.system_dir +
                                "/broken.json:3: field version: 3 is not supported (this gpupart reads version 2; "
                                "upgrade gpupart)",
                            "profile " + store_.system_dir +
                                "/misnamed.json: its name is 'other', not 'misnamed' as its file name says; rename one "
                                "of them",
                        }));
    EXPECT_EQ(error_of([&] { store_.load("broken"); }), problems[0]);
    // A malformed user file shadows the system one of the same name: it is an error, not a fallback.
    write_system("good.json", profile_text(named("good", "system")));
    std::ofstream(store_.user_dir + "/good.json") << "{";
    problems.clear();
    EXPECT_EQ(names(store_.list(&problems)), (std::vector<std::string>{}));
    EXPECT_EQ(problems.size(), 3u);
    EXPECT_TRUE(error_of([&] { store_.load("good"); }).starts_with("profile " + store_.user_dir + "/good.json:1: not valid JSON"));
}

TEST_F(ProfileStoreTest, SaveRefusesWhatCouldNotBeReadBack) {
    Profile bad = named("bad");
    bad.rules[0].tpcs = "gpc";
    EXPECT_EQ(error_of([&] { store_.save(bad, false); }),
              "profile " + store_.user_dir +
                  "/bad.json:13: field rules[0].tpcs: mask 'gpc': 'gpc' is not a GPC name (write gpc2 or gpc2-3)");
    EXPECT_FALSE(std::filesystem::exists(store_.user_dir + "/bad.json"));
    EXPECT_EQ(error_of([&] { store_.save(named("a b"), false); }),
              "profile 'a b': not a profile name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.')");
    EXPECT_EQ(error_of([&] { store_.save(named("x.json"), false); }),
              "profile 'x.json': a name ending in .json would be read as a file path");
}

TEST_F(ProfileStoreTest, LoadByPathAndMissingFiles) {
    const std::string path = (dir_ / "elsewhere.json").string();
    std::ofstream(path) << profile_text(named("anything"));
    EXPECT_EQ(store_.load(path).profile.name, "anything");  // a path may hold any profile name
    EXPECT_EQ(error_of([&] { store_.load((dir_ / "none.json").string()); }),
              "profile " + (dir_ / "none.json").string() + ": no such file");
    EXPECT_EQ(error_of([&] { store_.load(".hidden"); }),
              "profile '.hidden': not a profile name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.')");
    EXPECT_EQ(error_of([&] { store_.load(dir_.string() + "/"); }), dir_.string() + "/: is a directory, not a regular file; the profile must be a regular file: nothing done");
}

TEST(ProfileStore, StandardDirectories) {
    const auto saved = [](const char* name) -> std::optional<std::string> {
        const char* value = std::getenv(name);
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
    const auto xdg = saved("XDG_CONFIG_HOME");
    const auto home = saved("HOME");
    ::setenv("XDG_CONFIG_HOME", "/x/config", 1);
    EXPECT_EQ(ProfileStore::standard().user_dir, "/x/config/gpupart/profiles");
    ::setenv("XDG_CONFIG_HOME", "relative", 1);  // invalid: ignored
    ::setenv("HOME", "/home/alice", 1);
    EXPECT_EQ(ProfileStore::standard().user_dir, "/home/alice/.config/gpupart/profiles");
    ::unsetenv("XDG_CONFIG_HOME");
    EXPECT_EQ(ProfileStore::standard().user_dir, "/home/alice/.config/gpupart/profiles");
    EXPECT_EQ(ProfileStore::standard().system_dir, "/etc/gpupart/profiles");
    if (xdg) ::setenv("XDG_CONFIG_HOME", xdg->c_str(), 1);
    if (home) ::setenv("HOME", home->c_str(), 1);
    else ::unsetenv("HOME");
}
