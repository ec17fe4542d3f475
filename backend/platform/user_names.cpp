#include "platform/user_names.hpp"

#include <cerrno>
#include <vector>

#include <pwd.h>

#include <fmt/format.h>

namespace gpupart {

std::optional<std::string> passwd_name(unsigned uid) {
    std::vector<char> buffer(1024);
    while (true) {
        struct passwd entry {};
        struct passwd* found = nullptr;
        const int error = ::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found);
        if (error == ERANGE && buffer.size() < (1u << 20)) {  // a long entry (many groups in NSS backends)
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (error != 0 || found == nullptr) return std::nullopt;
        return std::string(found->pw_name);
    }
}

std::string user_name(unsigned uid) { return passwd_name(uid).value_or(fmt::format("uid {}", uid)); }

}  // namespace gpupart
