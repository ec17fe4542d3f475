#include "sources/probe_runner.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/mps_control.hpp"

extern char** environ;

namespace gpupart {
namespace {

// A private directory for the child's registry slot and its (empty) MPS pipe directory, removed after.
class ScratchDirectory {
public:
    ScratchDirectory() {
        std::string pattern = (std::filesystem::temp_directory_path() / "gpupart-probe.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw UserError(fmt::format("cannot create a directory for the probe under {}", pattern));
        path_ = pattern;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::vector<std::string> child_environment(const ProbeCommand& command, const std::string& scratch) {
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
        const std::string_view entry(*variable);
        const std::string_view name = entry.substr(0, entry.find('='));
        // The child gets its own preload, registry, MPS pipe and device order; nothing of the caller's.
        if (name == "LD_PRELOAD" || name.starts_with("GPUPART_") || name.starts_with("CUDA_MPS_") ||
            name == "CUDA_DEVICE_ORDER" || name == "CUDA_VISIBLE_DEVICES")
            continue;
        environment.emplace_back(entry);
    }
    environment.push_back("LD_PRELOAD=" + command.shim);
    environment.push_back("GPUPART_REGISTRY_DIR=" + scratch + "/registry");
    environment.push_back("CUDA_MPS_PIPE_DIRECTORY=" + scratch + "/no-mps");
    environment.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
    return environment;
}

std::string last_line(const std::string& text) {
    std::size_t end = text.find_last_not_of("\n ");
    if (end == std::string::npos) return "(no output)";
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

SourceStatus as_probe(SourceState state, std::string detail) { return SourceStatus{Source::probe, state, std::move(detail)}; }

}  // namespace

ProbeRun run_probe(const ProbeCommand& command) {
    ProbeRun run;
    for (const std::string* path : {&command.program, &command.shim})
        if (!std::filesystem::exists(*path)) {
            run.status = as_probe(SourceState::absent, fmt::format("{}: no such file", *path));
            return run;
        }
    const ScratchDirectory scratch;
    const auto start = std::chrono::steady_clock::now();
    CommandResult result;
    try {
        result = run_command({command.program, "--gpu", std::to_string(command.gpu)}, "", command.deadline_ms,
                             child_environment(command, scratch.path()));
    } catch (const UserError& error) {
        run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        run.status = as_probe(SourceState::failed, fmt::format("gpupart-probe: {} (killed)", error.what()));
        return run;
    }
    run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run.output = result.output;
    switch (result.exit_code) {
    case probe_ok:
        try {
            run.report = parse_probe_report(result.output);
            run.status = as_probe(SourceState::ok, fmt::format("probed {} mask bits with {} launches in {:.0f} ms",
                                                             run.report->mask_width, run.report->launches, run.wall_ms));
        } catch (const UserError& error) {
            run.status = as_probe(SourceState::failed, fmt::format("gpupart-probe output unreadable: {}", error.what()));
        }
        break;
    case probe_no_libcuda: run.status = as_probe(SourceState::absent, last_line(result.output)); break;
    case probe_unsupported: run.status = as_probe(SourceState::unsupported, last_line(result.output)); break;
    default:
        run.status = as_probe(SourceState::failed, fmt::format("gpupart-probe exited with {}: {}", result.exit_code,
                                                             last_line(result.output)));
    }
    return run;
}

}  // namespace gpupart
