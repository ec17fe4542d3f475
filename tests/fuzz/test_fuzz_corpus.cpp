// Replays the fuzz seed corpus through parse_profile in the ordinary build, so every CI run checks
// it, not only the fuzz job: each file parses or throws UserError, with the fuzz target's properties.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile_properties.hpp"
#include "registry_file_properties.hpp"

TEST(ProfileFuzzCorpus, EveryFileParsesOrThrowsUserError) {
    int files = 0;
    int parsed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(GPUPART_FUZZ_PROFILE_CORPUS)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        ++files;
        try {
            gpupart::parse_profile(text.str(), "input.json");
            ++parsed;
        } catch (const gpupart::UserError&) {
        }
        EXPECT_EQ(gpupart::fuzz::check_profile_properties(text.str()), "") << entry.path();
    }
    EXPECT_GE(files, 10);
    EXPECT_GE(parsed, 2);          // valid profiles are in the corpus
    EXPECT_GE(files - parsed, 5);  // and so are near misses
}

TEST(RegistryFilesFuzzCorpus, EveryFileKeepsTheProperties) {
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(GPUPART_FUZZ_REGISTRY_CORPUS)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream bytes;
        bytes << in.rdbuf();
        ++files;
        EXPECT_EQ(gpupart::fuzz::check_registry_file_properties(bytes.str()), "") << entry.path();
    }
    EXPECT_GE(files, 6);
}
