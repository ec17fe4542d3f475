#include "shim_mask_launcher.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

namespace gpupart::probe {
namespace {

constexpr unsigned long long kSpinNs = 20000;      // per block: keeps the first wave spread over the allowed SMs
constexpr unsigned kThreadsPerBlock = 32;
constexpr auto kLaunchDeadline = std::chrono::seconds(2);  // a probe launch takes well under a millisecond
constexpr unsigned kNotWritten = 0xffffffffu;

std::string mask_text(const std::optional<TpcMask>& allowed) {
    return allowed ? fmt::format("bits {}", allowed->to_list()) : std::string("no mask");
}

}  // namespace

ShimMaskLauncher::ShimMaskLauncher(const CudaDriver& cuda, CUfunction kernel, SlotFile slot, std::string gpu_uuid, int max_blocks,
                                   unsigned shared_bytes)
    : gpu_uuid_(std::move(gpu_uuid)), cuda_(cuda), kernel_(kernel), slot_(std::move(slot)), max_blocks_(max_blocks), shared_bytes_(shared_bytes) {
    cuda_.check(cuda_.mem_alloc(&buffer_, static_cast<std::size_t>(max_blocks_) * sizeof(unsigned)), "cuMemAlloc");
}

ShimMaskLauncher::~ShimMaskLauncher() {
    if (buffer_ != 0) cuda_.mem_free(buffer_);
}

std::vector<int> ShimMaskLauncher::launch(const std::optional<TpcMask>& allowed, const TpcMask& known_real, int blocks) {
    if (blocks < 1 || blocks > max_blocks_) throw CudaError(fmt::format("{} blocks: the buffer holds {}", blocks, max_blocks_));
    slot_.write_control(gpu_uuid_, allowed.has_value(), allowed.value_or(TpcMask{}), known_real);
    const SlotRecord before = slot_.read();
    const GpuStatus* here = before.status ? before.status->gpu(gpu_uuid_) : nullptr;
    const std::uint64_t masked_before = here != nullptr ? here->masked_launches : 0;
    const std::vector<unsigned> ids = run_kernel(nullptr, blocks, mask_text(allowed));
    check_shim_applied(allowed, masked_before);  // before the SMs are read: a pass-through is no result
    return distinct_sms(ids, mask_text(allowed));
}

std::vector<int> ShimMaskLauncher::launch_on_stream(CUstream stream, int blocks, const std::string& what) {
    if (blocks < 1 || blocks > max_blocks_) throw CudaError(fmt::format("{} blocks: the buffer holds {}", blocks, max_blocks_));
    slot_.write_control(gpu_uuid_, false, TpcMask{}, TpcMask{});
    return distinct_sms(run_kernel(stream, blocks, what), what);
}

std::vector<unsigned> ShimMaskLauncher::run_kernel(CUstream stream, int blocks, const std::string& what) {
    cuda_.check(cuda_.memset_d32(buffer_, kNotWritten, static_cast<std::size_t>(blocks)), "cuMemsetD32");
    unsigned long long spin = kSpinNs;
    void* params[] = {&buffer_, &spin};
    cuda_.check(cuda_.launch_kernel(kernel_, static_cast<unsigned>(blocks), 1, 1, kThreadsPerBlock, 1, 1, shared_bytes_,
                                    stream, params, nullptr),
                "cuLaunchKernel");
    wait_for_kernel(stream, what);
    std::vector<unsigned> ids(static_cast<std::size_t>(blocks));
    cuda_.check(cuda_.memcpy_dtoh(ids.data(), buffer_, ids.size() * sizeof(unsigned)), "cuMemcpyDtoH");
    return ids;
}

std::vector<int> ShimMaskLauncher::distinct_sms(std::vector<unsigned> ids, const std::string& what) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.back() == kNotWritten) throw CudaError(fmt::format("a block of the launch with {} recorded no SM", what));
    return std::vector<int>(ids.begin(), ids.end());
}

// Polls instead of blocking in a synchronize call, so a kernel that never ends (which the scan's
// anchor rules out) ends the probe with a message rather than a hang; the parent's deadline backs this up.
void ShimMaskLauncher::wait_for_kernel(CUstream stream, const std::string& what) const {
    const auto deadline = std::chrono::steady_clock::now() + kLaunchDeadline;
    for (;;) {
        const CUresult state = cuda_.stream_query(stream);
        if (state != kCudaNotReady) {
            cuda_.check(state, "probe kernel");
            return;
        }
        if (std::chrono::steady_clock::now() > deadline)
            throw CudaError(fmt::format("the probe kernel with {} did not finish within {} s", what, kLaunchDeadline.count()));
    }
}

void ShimMaskLauncher::check_shim_applied(const std::optional<TpcMask>& allowed, std::uint64_t masked_before) {
    const SlotRecord record = slot_.read();
    if (record.status && record.status->state == GPUPART_SHIM_CALLBACK_FAILED)
        throw ShimUnsupported("the CUDA driver refused the shim's launch callback: mask bits cannot be probed");
    const GpuStatus* entry = record.status ? record.status->gpu(gpu_uuid_) : nullptr;
    if (entry == nullptr || entry->publishing)
        throw CudaError(fmt::format("the shim published no status for GPU {} after a completed launch", gpu_uuid_));
    const GpuStatus& status = *entry;
    descriptor_version_ = status.descriptor_version;
    if (status.state == GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR)
        throw ShimUnsupported(fmt::format("launch descriptor version {:#x} is not one the shim can mask: mask bits cannot be "
                                          "probed on this GPU",
                                          status.descriptor_version));
    if (!allowed) return;
    if (status.state != GPUPART_SHIM_ACTIVE || !status.mask_applied || status.applied != *allowed ||
        status.masked_launches != masked_before + 1)
        throw CudaError(fmt::format("the shim did not apply {} to the launch (state {}, applied {})", mask_text(allowed),
                                    to_string(status.state), status.mask_applied ? status.applied.to_list() : "none"));
}

}  // namespace gpupart::probe
