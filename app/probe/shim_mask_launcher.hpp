#pragma once
// The probe's MaskLauncher on a real GPU: before each launch it writes the wanted TPC mask into this
// process's own registry slot, and the preloaded gpupart shim puts it into the launch descriptor, as
// it does for any partitioned process. After each launch it checks, in the slot's status and
// counters, that the shim applied exactly that mask, so a pass-through (unknown descriptor version)
// can never be mistaken for a probe result.
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_driver.hpp"
#include "registry/slot_file.hpp"
#include "sources/probe_scan.hpp"

namespace gpupart::probe {

// The shim cannot mask this GPU's launches (unknown descriptor version, no callback table): exit 3.
class ShimUnsupported : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class ShimMaskLauncher : public MaskLauncher {
public:
    // `max_blocks` sizes the result buffer; `shared_bytes` is the dynamic shared memory per block that
    // keeps one block per SM.
    ShimMaskLauncher(const CudaDriver& cuda, CUfunction kernel, SlotFile slot, std::string gpu_uuid, int max_blocks,
                     unsigned shared_bytes);
    ~ShimMaskLauncher() override;
    ShimMaskLauncher(const ShimMaskLauncher&) = delete;
    ShimMaskLauncher& operator=(const ShimMaskLauncher&) = delete;

    std::vector<int> launch(const std::optional<TpcMask>& allowed, const TpcMask& known_real, int blocks) override;

    // The same kernel on `stream` with no mask in the slot, so the descriptor carries only what the driver
    // put there (the stream's own mask); `what` names the launch in errors.
    std::vector<int> launch_on_stream(CUstream stream, int blocks, const std::string& what);

    // The descriptor version byte the shim saw at the last launch (0 before the first).
    unsigned descriptor_version() const { return descriptor_version_; }

private:
    std::string gpu_uuid_;  // the GPU the probe runs on: the slot entry it writes and reads
    std::vector<unsigned> run_kernel(CUstream stream, int blocks, const std::string& what);
    static std::vector<int> distinct_sms(std::vector<unsigned> ids, const std::string& what);
    void wait_for_kernel(CUstream stream, const std::string& what) const;
    void check_shim_applied(const std::optional<TpcMask>& allowed, std::uint64_t masked_before);

    const CudaDriver& cuda_;
    CUfunction kernel_;
    SlotFile slot_;
    int max_blocks_;
    unsigned shared_bytes_;
    CUdeviceptr buffer_ = 0;
    unsigned descriptor_version_ = 0;
};

}  // namespace gpupart::probe
