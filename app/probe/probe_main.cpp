// gpupart-probe [--gpu N]: which launch-descriptor mask bits of CUDA device N (PCI bus order) are real
// TPCs and which SMs each drives (docs/probe-and-sources.md), printed in the format of
// backend/sources/probe_report.hpp. It runs under libgpupart-shim.so, which applies each mask; `gpupart
// probe` starts it that way, with a deadline, and caches the result.
//
// Exit codes (ProbeExit): 0 report printed; 1 failed ("error: ..." line); 2 "no libcuda: ..." (no NVIDIA
// driver here); 3 the shim cannot mask this GPU's launches ("unsupported: ...").
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "cuda_driver.hpp"
#include "model/user_error.hpp"
#include "probe_kernel.hpp"
#include "registry/registry.hpp"
#include "shim_mask_launcher.hpp"
#include "stream_mask_launcher.hpp"
#include "sources/probe_report.hpp"
#include "sources/probe_runner.hpp"
#include "sources/probe_scan.hpp"
#include "sources/probe_stream_mask.hpp"

namespace gpupart::probe {
namespace {

// The kernel driver's version ("580.159.04"): the cache key next to the GPU's UUID.
std::string kernel_driver_version() {
    std::ifstream module_version("/sys/module/nvidia/version");
    std::string line;
    if (std::getline(module_version, line) && !line.empty()) return line;
    std::ifstream proc_version("/proc/driver/nvidia/version");
    std::smatch match;
    static const std::regex version(R"((\d+\.\d+(\.\d+)?))");
    if (std::getline(proc_version, line) && std::regex_search(line, match, version)) return match[1];
    return "unknown";
}

std::string uuid_text(const unsigned char bytes[16]) {
    std::string hex;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
        hex += fmt::format("{:02x}", bytes[i]);
    }
    return "GPU-" + hex;
}

int attribute(const CudaDriver& cuda, int which, CUdevice device) {
    int value = 0;
    cuda.check(cuda.device_get_attribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
}

// This process's registry slot, which the shim created when libcuda was loaded.
SlotFile own_slot() {
    try {
        const SlotRecord record = Registry(Registry::default_directory()).find_live(static_cast<int>(::getpid()));
        return SlotFile::open(record.path, true);
    } catch (const UserError& error) {
        throw CudaError(fmt::format("gpupart-probe must run under libgpupart-shim.so (use `gpupart probe`): {}", error.what()));
    }
}

ProbeReport probe_gpu(int ordinal) {
    const CudaDriver cuda = CudaDriver::load();  // the shim sets itself up inside this dlopen
    SlotFile slot = own_slot();
    const auto start = std::chrono::steady_clock::now();
    cuda.check(cuda.init(0), "cuInit");
    int count = 0;
    cuda.check(cuda.device_get_count(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count) throw CudaError(fmt::format("GPU {} does not exist: CUDA sees {} GPU(s)", ordinal, count));
    CUdevice device = 0;
    cuda.check(cuda.device_get(&device, ordinal), "cuDeviceGet");

    ProbeReport report;
    ProbeDevice& d = report.device;
    d.index = ordinal;
    char text[256] = {};
    cuda.check(cuda.device_get_name(text, sizeof text - 1, device), "cuDeviceGetName");
    d.name = text;
    unsigned char uuid[16] = {};
    cuda.check(cuda.device_get_uuid(uuid, device), "cuDeviceGetUuid");
    d.uuid = uuid_text(uuid);
    cuda.check(cuda.device_get_pci_bus_id(text, sizeof text - 1, device), "cuDeviceGetPCIBusId");
    d.pci_bus_id = text;
    d.compute_capability = fmt::format("{}.{}", attribute(cuda, kAttrComputeCapabilityMajor, device),
                                       attribute(cuda, kAttrComputeCapabilityMinor, device));
    d.sm_count = attribute(cuda, kAttrMultiprocessorCount, device);
    cuda.check(cuda.driver_get_version(&d.cuda_driver_version), "cuDriverGetVersion");
    d.driver_version = kernel_driver_version();

    // One block per SM: each block asks for more than half of an SM's shared memory.
    const int per_sm = attribute(cuda, kAttrMaxSharedMemoryPerMultiprocessor, device);
    const int per_block = attribute(cuda, kAttrMaxSharedMemoryPerBlockOptin, device);
    if (2 * per_block <= per_sm)
        throw ShimUnsupported(fmt::format("a block may use at most {} of an SM's {} bytes of shared memory: the probe cannot "
                                          "hold one block per SM",
                                          per_block, per_sm));
    CUcontext context = nullptr;
    cuda.check(cuda.primary_ctx_retain(&context, device), "cuDevicePrimaryCtxRetain");
    cuda.check(cuda.ctx_set_current(context), "cuCtxSetCurrent");
    CUmodule module = nullptr;
    cuda.check(cuda.module_load_data(&module, kProbeKernelPtx), "cuModuleLoadData (probe kernel PTX)");
    CUfunction kernel = nullptr;
    cuda.check(cuda.module_get_function(&kernel, module, kProbeKernelName), "cuModuleGetFunction");
    cuda.check(cuda.func_set_attribute(kernel, kFuncAttrMaxDynamicSharedSizeBytes, per_block), "cuFuncSetAttribute");

    {
        ShimMaskLauncher launcher(cuda, kernel, std::move(slot), d.uuid, 2 * d.sm_count, static_cast<unsigned>(per_block));
        launcher.launch(std::nullopt, TpcMask{}, d.sm_count);  // learns the descriptor version
        report.descriptor_version = static_cast<int>(launcher.descriptor_version());
        if (report.descriptor_version == 0x40) report.mask_width = 128;  // V04_00: the shim's 128-bit layout
        else if (report.descriptor_version >= 0x16 && report.descriptor_version < 0x40) report.mask_width = 64;
        else throw ShimUnsupported(fmt::format("launch descriptor version {:#x} has no mask layout the shim knows", report.descriptor_version));
        const ProbeScan scan = scan_mask_bits(launcher, d.sm_count, report.mask_width);
        report.anchor_bit = scan.anchor_bit;
        report.bit_sms = scan.bit_sms;
        // The driver's per-stream mask, checked against this scan before gpupart ever writes it.
        StreamMaskProbeLauncher streams(cuda, launcher);
        const StreamMaskVerdict verdict = verify_stream_mask(streams, scan.bit_sms, 2 * d.sm_count);
        report.stream_mask_offset = verdict.verified ? kStreamMaskOffset : -1;
        report.stream_mask_note = verdict.why;
        report.launches = scan.launches + 1 + verdict.launches;  // and the first launch, above
        report.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }  // the launcher frees its buffer while the context is still ours
    cuda.primary_ctx_release(device);
    return report;
}

int usage(const char* what) {
    std::printf("error: %s\nusage: gpupart-probe [--gpu N]\n", what);
    return probe_failed;
}

}  // namespace
}  // namespace gpupart::probe

int main(int argc, char** argv) {
    using namespace gpupart::probe;
    int gpu = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--gpu") != 0 || i + 1 >= argc) return usage(argv[i]);
        char* end = nullptr;
        const long value = std::strtol(argv[++i], &end, 10);
        if (*argv[i] == '\0' || *end != '\0' || value < 0 || value > 1024) return usage("--gpu needs a GPU number");
        gpu = static_cast<int>(value);
    }
    // Everything goes to stdout, errors as one last line, so a reader of the merged output sees one stream.
    try {
        std::fputs(gpupart::write_probe_report(probe_gpu(gpu)).c_str(), stdout);
        return gpupart::probe_ok;
    } catch (const NoLibcuda& error) {
        std::printf("%s\n", error.what());
        return gpupart::probe_no_libcuda;
    } catch (const ShimUnsupported& error) {
        std::printf("unsupported: %s\n", error.what());
        return gpupart::probe_unsupported;
    } catch (const std::exception& error) {
        std::printf("error: %s\n", error.what());
        return gpupart::probe_failed;
    }
}
