#pragma once
// An error caused by what the user gave us (a mask, a file, a PID). Its message is one line the user
// can act on; front ends print it as it is and change nothing.
#include <stdexcept>
#include <string>

namespace gpupart {

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace gpupart
