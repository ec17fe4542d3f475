#pragma once
// Each topology source's facts as JSON, for `gpupart source ... --json` and for front ends that show
// per-source detail. A fact is its value when known, else {"unknown": reason}; every object with
// facts carries its source's status as source_status_to_json gives it.
#include <nlohmann/json.hpp>

#include "sources/mmio_reader.hpp"
#include "sources/nvdebug_reader.hpp"
#include "sources/nvml_source.hpp"
#include "sources/source_status.hpp"
#include "sources/udev_source.hpp"

namespace gpupart {

nlohmann::ordered_json to_json(const NvmlFacts& facts);
nlohmann::ordered_json to_json(const MpsFacts& facts);
nlohmann::ordered_json to_json(const UdevFacts& facts);
nlohmann::ordered_json to_json(const NvdebugFacts& facts);
nlohmann::ordered_json to_json(const MmioFacts& facts);

}  // namespace gpupart
