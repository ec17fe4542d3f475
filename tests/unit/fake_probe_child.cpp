// A stand-in for gpupart-probe in the runner's tests: does what $FAKE_PROBE says, so the runner's
// deadline, exit-code mapping and child environment are tested without a GPU. (The real probe is
// tested on CI for its no-libcuda path and on the GPU machines for everything else.)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "sources/probe_report.hpp"

namespace {

const char* env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "(unset)";
}

gpupart::ProbeReport small_report() {
    gpupart::ProbeReport report;
    report.device = {1, "Fake GPU", "GPU-00000000-1111-2222-3333-444444444444", "00000000:17:00.0", "9.0", 4, 13000, "580.159.04"};
    report.descriptor_version = 0x40;
    report.mask_width = 64;
    report.anchor_bit = 0;
    for (int bit = 0; bit < 64; ++bit) report.bit_sms[bit] = {};
    report.bit_sms[0] = {0, 1};
    report.bit_sms[2] = {2, 3};
    report.launches = 65;
    report.elapsed_ms = 12.5;
    return report;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = env("FAKE_PROBE");
    if (mode == "report") {
        std::fputs(gpupart::write_probe_report(small_report()).c_str(), stdout);
        return 0;
    }
    if (mode == "truncated") {
        const std::string text = gpupart::write_probe_report(small_report());
        std::fputs(text.substr(0, text.size() / 2).c_str(), stdout);
        return 0;
    }
    if (mode == "environment") {
        std::printf("args");
        for (int i = 1; i < argc; ++i) std::printf(" %s", argv[i]);
        std::printf("\nLD_PRELOAD=%s\nGPUPART_REGISTRY_DIR=%s\nCUDA_MPS_PIPE_DIRECTORY=%s\nCUDA_DEVICE_ORDER=%s\n",
                    env("LD_PRELOAD"), env("GPUPART_REGISTRY_DIR"), env("CUDA_MPS_PIPE_DIRECTORY"), env("CUDA_DEVICE_ORDER"));
        std::printf("CUDA_VISIBLE_DEVICES=%s\nGPUPART_TPCS=%s\nerror: environment printed\n", env("CUDA_VISIBLE_DEVICES"),
                    env("GPUPART_TPCS"));
        return 1;
    }
    if (mode == "hang") std::this_thread::sleep_for(std::chrono::seconds(30));
    if (mode == "no-libcuda") {
        std::printf("no libcuda: libcuda.so.1: cannot open shared object file: No such file or directory\n");
        return 2;
    }
    if (mode == "unsupported") {
        std::printf("unsupported: launch descriptor version 0x50 is not one the shim can mask: mask bits cannot be probed on "
                    "this GPU\n");
        return 3;
    }
    if (mode == "crash") std::abort();
    std::printf("error: unknown FAKE_PROBE mode %s\n", mode.c_str());
    return 1;
}
