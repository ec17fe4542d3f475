#pragma once
// An error caused by what the user gave us (a mask, a file, a PID). Its message is one line the user
// can act on; front ends print it as it is and change nothing.
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpupart {

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// `text` made one line: newline, CR and tab as \n \r \t, other control bytes as \xNN. For messages
// that quote a file's contents or name, which may hold anything.
std::string one_line(std::string_view text);

}  // namespace gpupart
