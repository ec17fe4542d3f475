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

// The GPC-map seeds reach both sides of the reader: the valid one is accepted (so the fuzzer starts from
// a map whose properties are checked), the broken ones are refused.
TEST(RegistryFilesFuzzCorpus, TheGpcMapSeedsAreAcceptedAndRefusedAsNamed) {
    static const gpupart::fuzz::FuzzRegistry registry;
    ASSERT_FALSE(registry.user_dir.empty());
    const gpupart_gpu_uuid uuid = gpupart::fuzz::fuzz_gpu();
    char path[600];
    ASSERT_EQ(gpupart_gpcs_path(registry.user_dir.c_str(), &uuid, path, sizeof path), 0);
    for (const auto& [seed, expected] : {std::pair<const char*, int>{"gpcs-valid", 0}, {"gpcs-gpcs-overlap", -EPROTO},
                                         {"gpcs-other-gpu", -EPROTO}, {"gpcs-truncated", -EPERM},
                                         {"gpcs-count-wrong", -EPROTO}}) {
        std::ifstream in(std::string(GPUPART_FUZZ_REGISTRY_CORPUS) + "/" + seed, std::ios::binary);
        std::stringstream bytes;
        bytes << in.rdbuf();
        const std::string file = bytes.str().substr(1);  // after the selector byte
        std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
        gpupart_gpcs_file map{};
        EXPECT_EQ(gpupart_gpcs_read(registry.user_dir.c_str(), static_cast<std::uint32_t>(::getuid()), &uuid, &map), expected)
            << seed;
    }
}
