// How the programs find each other (platform/install_paths.hpp): the installed layout, the build tree,
// the override variables, and one error naming every place looked in when nothing is there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/install_paths.hpp"
#include "../lib/thrown_message.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kVariable = "GPUPART_TEST_HELPER";

class InstallPaths : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("gpupart-install-paths-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
        ::unsetenv(kVariable);
        ::unsetenv("GPUPART_SHIM");
    }
    void TearDown() override {
        fs::remove_all(root_);
        ::unsetenv(kVariable);
    }
    fs::path touch(const fs::path& relative) {
        const fs::path path = root_ / relative;
        fs::create_directories(path.parent_path());
        std::ofstream(path) << "x";
        return path;
    }
    fs::path root_;
};

std::string error_of(const auto& call) {
    return gpupart::test::thrown_message([&] { call(); });
}

}  // namespace

TEST_F(InstallPaths, AnInstalledGpupartFindsItsHelperInLibexec) {
    const fs::path helper = touch(fs::path("usr") / GPUPART_LIBEXEC_SUBDIR / "gpupart-probe");
    EXPECT_EQ(gpupart::find_helper(root_ / "usr/bin/gpupart", "gpupart-probe", kVariable), helper);
}

TEST_F(InstallPaths, AProgramInTheBuildTreeFindsTheHelperBesideIt) {
    const fs::path helper = touch("build/app/gpupart-render");
    EXPECT_EQ(gpupart::find_helper(root_ / "build/app/gpupart", "gpupart-render", kVariable), helper);
}

TEST_F(InstallPaths, TheVariableWinsAndAMissingFileItNamesIsAnError) {
    touch("build/app/gpupart-demo-worker");
    const fs::path chosen = touch("elsewhere/worker");
    ::setenv(kVariable, chosen.c_str(), 1);
    EXPECT_EQ(gpupart::find_helper(root_ / "build/app/gpupart", "gpupart-demo-worker", kVariable), chosen);
    ::setenv(kVariable, (root_ / "missing").c_str(), 1);
    // fmt, not operator+: GCC 12 warns falsely (-Warray-bounds) about a chain of string concatenations.
    EXPECT_EQ(error_of([&] { gpupart::find_helper(root_ / "build/app/gpupart", "gpupart-demo-worker", kVariable); }),
              fmt::format("{}={}: no such file", kVariable, (root_ / "missing").string()));
}

TEST_F(InstallPaths, AMissingHelperNamesEveryPlaceLookedIn) {
    const std::string error = error_of([&] { gpupart::find_helper(root_ / "usr/bin/gpupart", "gpupart-probe", kVariable); });
    EXPECT_NE(error.find((root_ / "usr/bin/gpupart-probe").string()), std::string::npos) << error;
    EXPECT_NE(error.find((root_ / "usr" / GPUPART_LIBEXEC_SUBDIR / "gpupart-probe").string()), std::string::npos) << error;
    EXPECT_NE(error.find("set GPUPART_TEST_HELPER"), std::string::npos) << error;
}

TEST_F(InstallPaths, TheShimIsFoundInstalledAndInTheBuildTree) {
    const fs::path installed = touch(fs::path("usr") / GPUPART_SHIM_SUBDIR / "libgpupart-shim.so");
    EXPECT_EQ(gpupart::find_shim_library(root_ / "usr/bin/gpupart"), installed);
    const fs::path built = touch("build/lib/libgpupart-shim.so");
    EXPECT_EQ(gpupart::find_shim_library(root_ / "build/app/gpupart"), built);
    EXPECT_NE(error_of([&] { gpupart::find_shim_library(root_ / "nowhere/bin/gpupart"); }).find("libgpupart-shim.so not found"),
              std::string::npos);
}

// `gpupart slurm conf` prints the plugin where the running gpupart's package has it: a .deb installs under
// /usr whatever prefix the build was configured with, so the path comes from the executable, not the prefix.
TEST_F(InstallPaths, TheSlurmPluginIsFoundBesideTheInstalledGpupartWhateverThePrefix) {
    const fs::path plugin = touch(fs::path("usr") / GPUPART_SLURM_PLUGIN_SUBDIR / "gpupart_spank.so");
    touch("usr/bin/gpupart");
    EXPECT_EQ(gpupart::find_slurm_plugin(root_ / "usr/bin/gpupart"), plugin);
}

TEST_F(InstallPaths, TheSlurmPluginOfABuildTreeIsInItsLibDirectory) {
    const fs::path plugin = touch("build/lib/gpupart_spank.so");
    EXPECT_EQ(gpupart::find_slurm_plugin(root_ / "build/app/gpupart"), plugin);
}

TEST_F(InstallPaths, WithoutThePluginTheInstalledPlaceIsNamed) {
    EXPECT_EQ(gpupart::find_slurm_plugin(root_ / "opt/x/bin/gpupart"),
              root_ / "opt/x" / GPUPART_SLURM_PLUGIN_SUBDIR / "gpupart_spank.so");
}
