#include "registry/slot_numbering.hpp"

#include "model/gpu_queries.hpp"

namespace gpupart {

void learn_numbering(TpcNumberings& numberings, const Gpu& gpu) {
    if (auto numbering = TpcNumbering::try_of(gpu)) numberings.insert_or_assign(gpu_key(gpu), *numbering);
}

TpcNumberings numberings_of(const std::vector<Gpu>& gpus) {
    TpcNumberings numberings;
    for (const Gpu& gpu : gpus) learn_numbering(numberings, gpu);
    return numberings;
}

namespace {

const TpcNumbering* find(const TpcNumberings& numberings, const std::string& uuid) {
    const auto it = numberings.find(uuid);
    return it == numberings.end() ? nullptr : &it->second;
}

// A disable mask (set bit = TPC not used) keeps its meaning: the TPCs it leaves enabled, renumbered.
TpcMask disable_to_numbers(const TpcNumbering& numbering, const TpcMask& disable) {
    return ~numbering.to_numbers(~disable);
}

}  // namespace

void number_slot_masks(SlotRecord& record, const TpcNumberings& numberings) {
    if (record.control)
        for (GpuControl& gpu : record.control->gpus) {
            const TpcNumbering* numbering = find(numberings, gpu.uuid);
            if (gpu.numbered || numbering == nullptr) continue;
            // A requested mask with bits that are no TPC of the GPU (written by hand or by another tool into the
            // start environment; the shim refuses one of holes only) is shown as the bits it is, never as fewer
            // TPCs. (Holes in real_tpcs name nothing a process could run on: they are dropped.)
            TpcMask holes;
            const TpcMask allowed = numbering->to_numbers(gpu.allowed, &holes);
            if (gpu.has_mask && !holes.empty()) continue;
            gpu.allowed = allowed;
            gpu.real_tpcs = numbering->to_numbers(gpu.real_tpcs);
            gpu.numbered = true;
        }
    if (record.status)
        for (GpuStatus& gpu : record.status->gpus) {
            const TpcNumbering* numbering = find(numberings, gpu.uuid);
            if (gpu.numbered || numbering == nullptr) continue;
            gpu.applied = numbering->to_numbers(gpu.applied);
            gpu.numbered = true;
        }
    if (!record.app.numbered) {
        const std::vector<std::string> on = gpus_of(record);
        const TpcNumbering* numbering = on.size() == 1 ? find(numberings, on.front()) : nullptr;
        if (numbering != nullptr) {
            record.app.global_disable = disable_to_numbers(*numbering, record.app.global_disable);
            for (AppStreamMask& stream : record.app.streams) stream.disable = disable_to_numbers(*numbering, stream.disable);
            record.app.numbered = true;
        }
    }
}

}  // namespace gpupart
