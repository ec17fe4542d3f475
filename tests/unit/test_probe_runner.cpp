// Running the probe as a child under the shim: its environment, its deadline, and what each way it can
// end means as a source status. A stand-in child plays the probe (see fake_probe_child.cpp); the real
// gpupart-probe is run too, for the no-libcuda path every machine without an NVIDIA driver takes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <dlfcn.h>

#include "sources/probe_runner.hpp"

using gpupart::SourceState;

namespace {

// Under the asan preset the preloaded shim carries the sanitizer runtime, so the child must not insist
// on the runtime coming first (as tests/shim/shim_end_to_end.sh does). No effect in other builds.
void allow_preloaded_sanitizer() {
    const char* options = std::getenv("ASAN_OPTIONS");
    const std::string value = std::string(options != nullptr ? options : "") + (options != nullptr ? ":" : "") +
                              "verify_asan_link_order=0";
    ::setenv("ASAN_OPTIONS", value.c_str(), 1);
}

gpupart::ProbeRun run_fake(const char* mode, int deadline_ms = 10000) {
    allow_preloaded_sanitizer();
    ::setenv("FAKE_PROBE", mode, 1);
    return gpupart::run_probe(gpupart::ProbeCommand{GPUPART_FAKE_PROBE, GPUPART_SHIM_PATH, 3, deadline_ms});
}

}  // namespace

TEST(ProbeRunner, GivesTheChildItsOwnShimRegistryNoMpsAndPciOrder) {
    ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    ::setenv("GPUPART_TPCS", "0xff", 1);
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/the-users-mps", 1);
    const gpupart::ProbeRun run = run_fake("environment");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    ::unsetenv("GPUPART_TPCS");
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_EQ(run.status.state, SourceState::failed);
    EXPECT_EQ(run.status.source, gpupart::Source::probe);
    EXPECT_EQ(run.status.detail, "gpupart-probe exited with 1: error: environment printed");
    EXPECT_NE(run.output.find("args --gpu 3\n"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(std::string("LD_PRELOAD=") + GPUPART_SHIM_PATH + "\n"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("GPUPART_REGISTRY_DIR=/tmp/gpupart-probe."), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("/no-mps\n"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("CUDA_DEVICE_ORDER=PCI_BUS_ID\n"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("CUDA_VISIBLE_DEVICES=(unset)\n"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("GPUPART_TPCS=(unset)\n"), std::string::npos) << run.output;
}

TEST(ProbeRunner, ReadsACompleteReport) {
    const gpupart::ProbeRun run = run_fake("report");
    ASSERT_EQ(run.status.state, SourceState::ok) << run.status.detail;
    ASSERT_TRUE(run.report.has_value());
    EXPECT_EQ(run.report->device.name, "Fake GPU");
    EXPECT_EQ(run.report->bit_sms.at(2), (std::vector<int>{2, 3}));
    EXPECT_NE(run.status.detail.find("probed 64 mask bits with 65 launches in "), std::string::npos) << run.status.detail;
    EXPECT_GT(run.wall_ms, 0);
}

TEST(ProbeRunner, SaysWhyThereIsNoReport) {
    gpupart::ProbeRun run = run_fake("truncated");
    EXPECT_EQ(run.status.state, SourceState::failed);
    EXPECT_NE(run.status.detail.find("gpupart-probe output unreadable: probe output"), std::string::npos) << run.status.detail;
    run = run_fake("no-libcuda");
    EXPECT_EQ(run.status.state, SourceState::absent);
    EXPECT_EQ(run.status.detail, "no libcuda: libcuda.so.1: cannot open shared object file: No such file or directory");
    run = run_fake("unsupported");
    EXPECT_EQ(run.status.state, SourceState::unsupported);
    EXPECT_EQ(run.status.detail.rfind("unsupported: launch descriptor version 0x50", 0), 0u) << run.status.detail;
    run = run_fake("crash");
    EXPECT_EQ(run.status.state, SourceState::failed);
    EXPECT_EQ(run.status.detail.rfind("gpupart-probe exited with 134", 0), 0u) << run.status.detail;
    EXPECT_FALSE(run.report.has_value());
}

TEST(ProbeRunner, KillsAProbeThatOutlivesItsDeadline) {
    const gpupart::ProbeRun run = run_fake("hang", 300);
    EXPECT_EQ(run.status.state, SourceState::failed);
    EXPECT_NE(run.status.detail.find("did not answer within"), std::string::npos) << run.status.detail;
    EXPECT_NE(run.status.detail.find("(killed)"), std::string::npos) << run.status.detail;
    EXPECT_LT(run.wall_ms, 5000);
}

TEST(ProbeRunner, MissingProgramOrShimIsAbsent) {
    gpupart::ProbeRun run = gpupart::run_probe({"/nonexistent/gpupart-probe", GPUPART_SHIM_PATH, 0, 1000});
    EXPECT_EQ(run.status.state, SourceState::absent);
    EXPECT_EQ(run.status.detail, "/nonexistent/gpupart-probe: no such file");
    run = gpupart::run_probe({GPUPART_FAKE_PROBE, "/nonexistent/libgpupart-shim.so", 0, 1000});
    EXPECT_EQ(run.status.detail, "/nonexistent/libgpupart-shim.so: no such file");
}

TEST(ProbeRunner, TheRealProbeSaysNoLibcudaInOneLineWhereThereIsNoDriver) {
    if (void* libcuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL); libcuda != nullptr ||
        (libcuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) != nullptr) {
        ::dlclose(libcuda);
        GTEST_SKIP() << "this machine has libcuda.so.1: the GPU machines' device tests cover the probe";
    }
    allow_preloaded_sanitizer();
    const gpupart::ProbeRun run = gpupart::run_probe({GPUPART_PROBE_PATH, GPUPART_SHIM_PATH, 0, 20000});
    EXPECT_EQ(run.status.state, SourceState::absent);
    EXPECT_EQ(run.status.detail.rfind("no libcuda: libcuda.so.1: cannot open shared object file", 0), 0u) << run.status.detail;
    EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << "one line: " << run.output;
}
