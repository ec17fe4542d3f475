// gpupart top's SCALING column: each process's saved curve, matched by command line, user and
// GPU, as its measured class and speedup from half the TPCs to all; the store read again only every 5 s.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "top/top_layout.hpp"
#include "top/top_scaling.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

namespace {

StoredCurve curve_of(const std::string& command, double b_ms) {
    StoredCurve curve;
    curve.identity = CurveIdentity{command, "root", gpu_key(h200())};
    curve.total_tpcs = 66;
    curve.measured = "2026-11-25T23:00:00Z";
    curve.rate_meaning = "kernel launches + CUDA graph replays per second";
    for (int m : {66, 33, 16, 8, 4, 2}) curve.points.push_back(CurvePoint{m, 1.0 / (0.01 / m + b_ms / 1000.0), 2.0, 0});
    return curve;
}

struct TempDir {
    std::string path;
    TempDir() {
        char name[] = "/tmp/gpupart-top-scaling-XXXXXX";
        path = ::mkdtemp(name);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST(TopScaling, EachProcessShowsItsSavedCurvesClassAndSpeedup) {
    TempDir dir;
    const CurveStore store{dir.path + "/curves"};
    store.save(curve_of("python3 train.py", 0.01));  // b small: compute-bound, 1.94x from 33 to 66
    store.save(curve_of("python3 copy.py", 1.0));    // b large: saturated, 1.13x
    TopData data = frame_data({{4201, "gpc0-1", "python3 train.py"}, {4202, "gpc2-3", "python3 copy.py"},
                               {4203, "gpc4", "python3 never-measured.py"}});
    ScalingClasses classes(store.dir);
    const auto now = std::chrono::steady_clock::now();
    classes.add_to(data, gpu_key(h200()), now);
    EXPECT_EQ(data.processes[0].scaling, "compute 1.94x");
    EXPECT_EQ(data.processes[1].scaling, "memory 1.13x");
    EXPECT_EQ(data.processes[2].scaling, "");
    // Another GPU's curve of the same program is not this GPU's.
    TopData other = frame_data({{4201, "gpc0-1", "python3 train.py"}});
    classes.add_to(other, "GPU-ffffffff-0000-0000-0000-000000000000", now);
    EXPECT_EQ(other.processes[0].scaling, "");
    // The table shows it where it is wide enough.
    const Screen screen = layout_top(data, UiState{}, 230, 40);
    SCOPED_TRACE(screen.text());
    EXPECT_NE(screen.text().find("SCALING"), std::string::npos);
    EXPECT_NE(screen.text().find("compute 1.94x"), std::string::npos);
    EXPECT_NE(screen.text().find("memory 1.13x"), std::string::npos);
}

TEST(TopScaling, TheStoreIsReadAgainOnlyAfterFiveSeconds) {
    TempDir dir;
    const CurveStore store{dir.path + "/curves"};
    ScalingClasses classes(store.dir);
    TopData data = frame_data({{4201, "gpc0-1", "python3 train.py"}});
    const auto start = std::chrono::steady_clock::now();
    classes.add_to(data, gpu_key(h200()), start);
    EXPECT_EQ(data.processes[0].scaling, "");
    store.save(curve_of("python3 train.py", 0.01));
    classes.add_to(data, gpu_key(h200()), start + std::chrono::seconds(1));
    EXPECT_EQ(data.processes[0].scaling, "") << "read again within 5 s";
    classes.add_to(data, gpu_key(h200()), start + ScalingClasses::reread);
    EXPECT_EQ(data.processes[0].scaling, "compute 1.94x");
}
