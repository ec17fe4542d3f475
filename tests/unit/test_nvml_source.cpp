// The NVML source's paths that CI can take: no libnvidia-ml at all, a library that is not NVML, NVML
// refusing to start, and a minimal old NVML (fake_nvml.c) that only has unversioned symbols. The real
// NVML is read on the GPU machines (tests/device/probe_tests.sh).
#include <gtest/gtest.h>

#include <cstdlib>

#include "sources/nvml_source.hpp"

using gpupart::SourceState;

TEST(NvmlSource, NoLibraryIsAbsent) {
    const gpupart::NvmlFacts facts = gpupart::read_nvml("libnvidia-ml-missing.so.1");
    EXPECT_EQ(facts.status.source, gpupart::Source::nvml);
    EXPECT_EQ(facts.status.state, SourceState::absent);
    EXPECT_EQ(facts.status.detail,
              "no NVML: libnvidia-ml-missing.so.1: cannot open shared object file: No such file or directory");
    EXPECT_TRUE(facts.devices.empty());
}

TEST(NvmlSource, ALibraryThatIsNotNvmlIsUnsupported) {
    const gpupart::NvmlFacts facts = gpupart::read_nvml("libm.so.6");
    EXPECT_EQ(facts.status.state, SourceState::unsupported);
    EXPECT_EQ(facts.status.detail, "libm.so.6 has no nvmlInit_v2: not NVIDIA's NVML, or too old");
}

TEST(NvmlSource, InitFailuresSayWhy) {
    ::setenv("FAKE_NVML_INIT", "9", 1);
    gpupart::NvmlFacts facts = gpupart::read_nvml(GPUPART_FAKE_NVML);
    EXPECT_EQ(facts.status.state, SourceState::absent);
    EXPECT_EQ(facts.status.detail, "nvmlInit: NVML error 9 (Driver Not Loaded)");
    ::setenv("FAKE_NVML_INIT", "4", 1);
    facts = gpupart::read_nvml(GPUPART_FAKE_NVML);
    EXPECT_EQ(facts.status.state, SourceState::refused);
    ::setenv("FAKE_NVML_INIT", "999", 1);
    facts = gpupart::read_nvml(GPUPART_FAKE_NVML);
    EXPECT_EQ(facts.status.state, SourceState::failed);
    EXPECT_EQ(facts.status.detail, "nvmlInit: NVML error 999 (Unknown Error)");
    ::unsetenv("FAKE_NVML_INIT");
}

TEST(NvmlSource, OldNvmlThroughUnversionedSymbolsWithReasonsForWhatItLacks) {
    const gpupart::NvmlFacts facts = gpupart::read_nvml(GPUPART_FAKE_NVML);
    ASSERT_EQ(facts.status.state, SourceState::ok) << facts.status.detail;
    EXPECT_EQ(facts.status.detail, "1 GPU(s), driver unknown");
    EXPECT_EQ(facts.driver_version.unknown_reason, "this NVML has no nvmlSystemGetDriverVersion");
    ASSERT_EQ(facts.devices.size(), 1u);
    const gpupart::NvmlDevice& d = facts.devices[0];
    EXPECT_EQ(d.name.value, "Fake GPU");
    EXPECT_EQ(d.uuid.value, "GPU-00000000-1111-2222-3333-444444444444");
    EXPECT_EQ(d.pci_bus_id.value, "00000000:17:00.0");
    EXPECT_EQ(d.pci_bus_id.from.source, gpupart::Source::nvml);
    EXPECT_FALSE(d.sm_count.known());
    EXPECT_EQ(d.sm_count.unknown_reason,
              "nvmlDeviceGetAttributes: NVML error 3 (Not Supported) (NVML gives SM counts for MIG devices only)");
    EXPECT_EQ(d.memory_total_bytes.unknown_reason, "this NVML has no nvmlDeviceGetMemoryInfo");
    EXPECT_EQ(d.sm_clock_mhz.unknown_reason, "this NVML has no nvmlDeviceGetClockInfo");
    EXPECT_EQ(d.mig_enabled.value, false);
    ASSERT_EQ(d.processes.size(), 2u) << d.processes_unknown;
    EXPECT_EQ(d.processes[0].pid, 1);
    EXPECT_EQ(d.processes[0].used_memory_bytes.value, 512ull << 20);
    EXPECT_EQ(d.processes[1].pid, 4242);
    EXPECT_EQ(d.processes[1].used_memory_bytes.unknown_reason, "NVML reports no memory figure for it");
}

TEST(NvmlSource, MpsServersGetTheirClients) {
    gpupart::NvmlFacts facts;
    facts.devices.resize(1);
    facts.devices[0].processes = {{100, "nvidia-cuda-mps-server", {}, false, {}}, {200, "python3", {}, false, {}}};
    gpupart::MpsFacts mps;
    mps.state.control_running = true;
    mps.state.server_pids = {100};
    mps.clients = {{100, {300, 301}}};
    gpupart::attach_mps_clients(facts, mps);
    EXPECT_TRUE(facts.devices[0].processes[0].mps_server);
    EXPECT_EQ(facts.devices[0].processes[0].mps_clients, (std::vector<int>{300, 301}));
    EXPECT_FALSE(facts.devices[0].processes[1].mps_server);
}

TEST(NvmlSource, MpsNotRunningHereSaysSo) {
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", "/nonexistent/gpupart-test-mps", 1);
    const gpupart::MpsFacts mps = gpupart::read_mps();
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_FALSE(mps.state.control_running);
    EXPECT_EQ(mps.state.detail, "not running (no control socket /nonexistent/gpupart-test-mps/control)");
    EXPECT_TRUE(mps.clients.empty());
    EXPECT_EQ(mps.clients_unknown, "");
}
