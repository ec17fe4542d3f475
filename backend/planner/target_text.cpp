#include "planner/target_text.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "model/pid.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

constexpr const char* kForm = "a target is PID=RATE (launches per second, e.g. 4242=300) or PID=SHARE% (e.g. 4242=50%)";

}  // namespace

ProcessTarget parse_process_target(std::string_view text) {
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) throw UserError(fmt::format("--target '{}': {}", one_line(text), kForm));
    ProcessTarget result;
    result.pid = parse_pid(text.substr(0, equals));
    std::string_view value = text.substr(equals + 1);
    const bool share = !value.empty() && value.back() == '%';
    if (share) value.remove_suffix(1);
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() || !std::isfinite(number))
        throw UserError(fmt::format("--target '{}': '{}' is not a number; {}", one_line(text), one_line(value), kForm));
    if (number <= 0) throw UserError(fmt::format("--target '{}': a target must be above 0", one_line(text)));
    if (share && number > 100)
        throw UserError(fmt::format("--target '{}': a share is at most 100% (the process alone on the whole GPU)", one_line(text)));
    result.target = share ? Target::share(number / 100) : Target::rate(number);
    return result;
}

}  // namespace gpupart
