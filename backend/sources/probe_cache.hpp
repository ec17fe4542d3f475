#pragma once
// Probe results kept per GPU UUID and driver version: which mask bits are TPCs does not change while
// the same GPU runs the same driver, so `gpupart probe` measures once and everything else reads the
// cache. The cache file is the probe's own report text ($XDG_CACHE_HOME/gpupart, else ~/.cache/gpupart).
// Beside each user's cache there is the system's, /var/cache/gpupart, which gpupart-probe.service fills at
// boot as root (packaging/system/gpupart-probe.service), so that users need not each run `gpupart probe`.
#include <optional>
#include <string>

#include <sys/types.h>

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

inline constexpr const char* kSystemProbeCacheDirectory = "/var/cache/gpupart";

// The user's own cache first. Only when it has no probe of this GPU and driver, the system cache in
// `system_directory`: its file is trusted only when `trusted_owner` (root) owns it and nobody else may
// write it (anybody could have written a report that misplaces every TPC); one that is not trusted, or
// is no regular file, is ignored and the absent status says why. A problem with the user's own file is
// a failed status, never passed over for the system's.
CachedProbe load_cached_probe(const std::string& uuid, const std::string& driver_version,
                              const std::string& system_directory = kSystemProbeCacheDirectory, uid_t trusted_owner = 0);

}  // namespace gpupart
