#pragma once
// Probe results kept per GPU UUID and driver version: which mask bits are TPCs does not change while
// the same GPU runs the same driver, so `gpupart probe` measures once and everything else reads the
// cache. The cache file is the probe's own report text ($XDG_CACHE_HOME/gpupart, else ~/.cache/gpupart).
#include <optional>
#include <string>

#include "sources/probe_report.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

// Throws UserError when neither XDG_CACHE_HOME nor HOME is set.
std::string probe_cache_directory();
std::string probe_cache_path(const std::string& uuid, const std::string& driver_version);

// Writes the report under its GPU's UUID and driver version (atomically: a temporary file renamed);
// returns the path. Throws UserError with the path when it cannot.
std::string store_probe(const ProbeReport& report);

struct CachedProbe {
    SourceStatus status;  // ok (detail names the file), absent (none yet: run `gpupart probe`), failed (unreadable)
    std::optional<ProbeReport> report;
    std::string path;
};

CachedProbe load_cached_probe(const std::string& uuid, const std::string& driver_version);

}  // namespace gpupart
