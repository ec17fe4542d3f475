#pragma once
// A SourceStatus as text and JSON, the same everywhere (`gpupart gpus`, `topology --sources`, the GUI).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sources/source_status.hpp"

namespace gpupart {

std::string_view to_string(SourceState state);  // "ok", "needs root", ...
// "rmctrl ok: driver 580.159.04 via /dev/nvidiactl, ...": one line.
std::string source_status_line(const SourceStatus& status);
// {"source": "rmctrl", "state": "ok", "detail": "..."}; state as to_string gives it, "needs root" as "needs_root".
nlohmann::ordered_json source_status_to_json(const SourceStatus& status);

}  // namespace gpupart
