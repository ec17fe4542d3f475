#include "stream_mask_launcher.hpp"

#include <cstring>

#include <fmt/format.h>

namespace gpupart::probe {
namespace {

// The driver object a CUstream handle's first word points to; its mask field is five u32 from `offset`.
std::uint32_t* mask_field(CUstream stream, int offset) {
    char* object = nullptr;
    std::memcpy(&object, stream, sizeof object);
    if (object == nullptr) return nullptr;
    return reinterpret_cast<std::uint32_t*>(object + offset);
}

}  // namespace

StreamMaskProbeLauncher::StreamMaskProbeLauncher(const CudaDriver& cuda, ShimMaskLauncher& runner, int offset)
    : cuda_(cuda), runner_(runner), offset_(offset) {
    cuda_.check(cuda_.stream_create(&stream_, 0), "cuStreamCreate");
}

StreamMaskProbeLauncher::~StreamMaskProbeLauncher() {
    if (stream_ != nullptr) cuda_.stream_destroy(stream_);
}

std::vector<int> StreamMaskProbeLauncher::launch(const std::array<std::uint32_t, 4>& disable, int blocks) {
    std::uint32_t* field = mask_field(stream_, offset_);
    if (field == nullptr) throw StreamMaskUnusable("the stream handle points to no driver object: no stream mask here");
    if (!checked_) {
        std::uint32_t words[5];
        std::memcpy(words, field, sizeof words);
        if (words[0] != 0 || words[1] != 0 || words[2] != 0 || words[3] != 0 || words[4] != 0)
            throw StreamMaskUnusable(fmt::format("a fresh stream holds {:#x} {:#x} {:#x} {:#x} {:#x} at offset {:#x}, not an "
                                                 "empty mask: this driver keeps no stream mask there",
                                                 words[0], words[1], words[2], words[3], words[4], offset_));
        checked_ = true;
    }
    std::memcpy(field + 1, disable.data(), 4 * sizeof(std::uint32_t));
    field[0] = 1u;  // enable
    try {
        return runner_.launch_on_stream(stream_, blocks, fmt::format("stream mask {:08x}{:08x}{:08x}{:08x}", disable[3],
                                                                      disable[2], disable[1], disable[0]));
    } catch (const CudaError& error) {
        throw StreamMaskUnusable(error.what());
    }
}

}  // namespace gpupart::probe
