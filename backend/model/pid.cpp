#include "model/pid.hpp"

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {

int parse_pid(std::string_view text) {
    const auto refuse = [&](std::string_view why) {
        return UserError(fmt::format("'{}' is not a process id: {}; write it in decimal digits, 1 to {} (see `gpupart list`)",
                                     one_line(text, 40), why, kPidMax));
    };
    if (text.empty()) throw refuse("it is empty");
    long long value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') throw refuse(fmt::format("'{}' is not a decimal digit", one_line(std::string_view(&c, 1))));
        value = value * 10 + (c - '0');
        if (value > kPidMax) throw refuse("it is too large");
    }
    if (text.size() > 1 && text[0] == '0') throw refuse("it starts with 0");
    if (value == 0) throw refuse("0 names no process");
    return static_cast<int>(value);
}

std::optional<std::string> pid_problem(long long pid) {
    if (pid >= 1 && pid <= kPidMax) return std::nullopt;
    return fmt::format("{} is not a process id (1 to {})", pid, kPidMax);
}

}  // namespace gpupart
