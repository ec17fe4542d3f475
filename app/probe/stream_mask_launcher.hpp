#pragma once
// The probe's StreamMaskLauncher on a real GPU (sources/probe_stream_mask.hpp): one stream of its own
// whose driver object gets the mask written at the offset under test before each launch. The offset is
// the one measured on CUDA 13.0 / driver 580 (docs/launch-path.md); the verdict says whether this driver
// build keeps the mask there. Before the first write the field must read as an empty mask (five zero
// words) on the fresh stream: anything else means the offset is not the mask here, and nothing is written.
#include <string>

#include "cuda_driver.hpp"
#include "shim_mask_launcher.hpp"
#include "sources/probe_stream_mask.hpp"

namespace gpupart::probe {

inline constexpr int kStreamMaskOffset = 0x51c;

class StreamMaskProbeLauncher : public StreamMaskLauncher {
public:
    StreamMaskProbeLauncher(const CudaDriver& cuda, ShimMaskLauncher& runner, int offset = kStreamMaskOffset);
    ~StreamMaskProbeLauncher() override;
    StreamMaskProbeLauncher(const StreamMaskProbeLauncher&) = delete;
    StreamMaskProbeLauncher& operator=(const StreamMaskProbeLauncher&) = delete;

    std::vector<int> launch(const std::array<std::uint32_t, 4>& disable, int blocks) override;

private:
    const CudaDriver& cuda_;
    ShimMaskLauncher& runner_;
    int offset_;
    CUstream stream_ = nullptr;
    bool checked_ = false;  // the field read as an empty mask on the fresh stream
};

}  // namespace gpupart::probe
