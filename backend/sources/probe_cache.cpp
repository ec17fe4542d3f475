#include "sources/probe_cache.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

// UUIDs and driver versions are letters, digits, '-' and '.'; anything else must not shape a path.
std::string file_safe(const std::string& text) {
    std::string out = text;
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    return out.empty() ? "unknown" : out;
}

// A probe report is a few kilobytes; the bound refuses a FIFO-fed or huge file without reading it all.
constexpr std::size_t kMaxProbeCacheBytes = 1u << 20;

}  // namespace

std::string probe_cache_directory() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/gpupart";
    if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/gpupart";
    throw UserError("neither XDG_CACHE_HOME nor HOME is set: nowhere to keep probe results");
}

std::string probe_cache_path(const std::string& uuid, const std::string& driver_version) {
    return fmt::format("{}/probe-{}-{}.txt", probe_cache_directory(), file_safe(uuid), file_safe(driver_version));
}

std::string store_probe(const ProbeReport& report) {
    const std::string path = probe_cache_path(report.device.uuid, report.device.driver_version);
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    if (error) throw UserError(fmt::format("cannot create {}: {}", std::filesystem::path(path).parent_path().string(), error.message()));
    // A new file with a random name renamed over the old one: a planted name is never written through.
    replace_file(path, write_probe_report(report), 0644, "probe cache");
    return path;
}

CachedProbe load_cached_probe(const std::string& uuid, const std::string& driver_version) {
    CachedProbe cached;
    cached.path = probe_cache_path(uuid, driver_version);
    // Sets the status only: every path returns the one named `cached` (a lambda returning a copy of it
    // made GCC 12 warn, falsely, that its optional report may be used uninitialized).
    auto fail = [&](const std::string& why) {
        cached.report.reset();
        cached.status = SourceStatus{Source::probe, SourceState::failed, why + " (run `gpupart probe` to measure again)"};
    };
    std::optional<std::string> text;
    try {
        text = read_regular_file_if_exists(cached.path, kMaxProbeCacheBytes, Links::follow, "probe cache");
    } catch (const UserError& error) {
        fail(error.what());  // names the file: a FIFO, a device, too large, unreadable
        return cached;
    }
    if (!text) {
        cached.status = SourceStatus{Source::probe, SourceState::absent,
                                     fmt::format("no probe of {} with driver {} yet: run `gpupart probe`", uuid, driver_version)};
        return cached;
    }
    try {
        cached.report = parse_probe_report(*text);
    } catch (const UserError& error) {
        fail(fmt::format("{}: {}", cached.path, error.what()));
        return cached;
    }
    if (cached.report->device.uuid != uuid || cached.report->device.driver_version != driver_version) {
        cached.status = SourceStatus{Source::probe, SourceState::failed,
                                     fmt::format("{} holds a probe of {} with driver {}, not this GPU", cached.path,
                                                 cached.report->device.uuid, cached.report->device.driver_version)};
        cached.report.reset();
        return cached;
    }
    cached.status = SourceStatus{Source::probe, SourceState::ok, fmt::format("cached probe {}", cached.path)};
    return cached;
}

}  // namespace gpupart
