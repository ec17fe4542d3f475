#pragma once
// The one helper behind every test's error_of: the message of the error a call throws. Tests compare the
// whole message, because it is what the user reads.
#include <string>
#include <string_view>
#include <utility>

#include "model/user_error.hpp"

namespace gpupart::test {

// The message of the `Error` (a UserError unless told) that `action` throws, or `none` when it throws
// nothing. Any other exception passes through and fails the test.
template <typename Error = UserError, typename Action>
std::string thrown_message(Action&& action, std::string_view none = "no error") {
    try {
        std::forward<Action>(action)();
    } catch (const Error& error) {
        return error.what();
    }
    return std::string(none);
}

}  // namespace gpupart::test
