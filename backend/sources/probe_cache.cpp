#include "sources/probe_cache.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "platform/xdg_directories.hpp"

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
    if (const auto cache = xdg_base_directory(XdgBase::cache)) return *cache + "/gpupart";
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

namespace {

// `text`, read from `path`, as the probe of this GPU and driver: ok, or failed with why.
void parse_cached(CachedProbe& cached, const std::string& text, const std::string& uuid, const std::string& driver_version,
                  std::string_view which) {
    try {
        cached.report = parse_probe_report(text);
    } catch (const UserError& error) {
        cached.report.reset();
        cached.status = SourceStatus{Source::probe, SourceState::failed,
                                     fmt::format("{}: {} (run `gpupart probe` to measure again)", cached.path, error.what())};
        return;
    }
    if (cached.report->device.uuid != uuid || cached.report->device.driver_version != driver_version) {
        cached.status = SourceStatus{Source::probe, SourceState::failed,
                                     fmt::format("{} holds a probe of {} with driver {}, not this GPU", cached.path,
                                                 cached.report->device.uuid, cached.report->device.driver_version)};
        cached.report.reset();
        return;
    }
    cached.status = SourceStatus{Source::probe, SourceState::ok, fmt::format("cached probe {}{}", cached.path, which)};
}

// The system cache's file, or why it is not used (a file root did not write, a FIFO, a link: never read).
std::optional<std::string> read_system_cache(const std::string& path, uid_t trusted_owner, std::string& ignored) {
    try {
        auto file = open_regular(path, O_RDONLY, Links::refuse, "system probe cache", true);
        if (!file) return std::nullopt;
        if (file->owner != trusted_owner) {
            ignored = fmt::format("{}: owned by uid {}, not {}: ignored", path, file->owner, trusted_owner);
            return std::nullopt;
        }
        if ((file->mode & (S_IWGRP | S_IWOTH)) != 0) {
            ignored = fmt::format("{}: writable by others (mode {:o}): ignored", path, file->mode & 07777);
            return std::nullopt;
        }
        return read_bounded(file->fd.get(), kMaxProbeCacheBytes, path, "system probe cache");
    } catch (const UserError& error) {
        ignored = fmt::format("{}: ignored", error.what());
        return std::nullopt;
    }
}

}  // namespace

CachedProbe load_cached_probe(const std::string& uuid, const std::string& driver_version, const std::string& system_directory,
                              uid_t trusted_owner) {
    CachedProbe cached;
    cached.path = probe_cache_path(uuid, driver_version);
    std::optional<std::string> text;
    try {
        text = read_regular_file_if_exists(cached.path, kMaxProbeCacheBytes, Links::follow, "probe cache");
    } catch (const UserError& error) {
        // Names the file: a FIFO, a device, too large, unreadable.
        cached.status = SourceStatus{Source::probe, SourceState::failed,
                                     fmt::format("{} (run `gpupart probe` to measure again)", error.what())};
        return cached;
    }
    if (text) {
        parse_cached(cached, *text, uuid, driver_version, "");
        return cached;
    }
    const std::string system_path =
        fmt::format("{}/probe-{}-{}.txt", system_directory, file_safe(uuid), file_safe(driver_version));
    std::string ignored;
    if (system_path != cached.path) text = read_system_cache(system_path, trusted_owner, ignored);
    if (text) {
        cached.path = system_path;
        parse_cached(cached, *text, uuid, driver_version, " (system cache)");
        return cached;
    }
    cached.status = SourceStatus{Source::probe, SourceState::absent,
                                 fmt::format("no probe of {} with driver {} yet: run `gpupart probe`{}", uuid, driver_version,
                                             ignored.empty() ? "" : fmt::format(" ({})", ignored))};
    return cached;
}

}  // namespace gpupart
