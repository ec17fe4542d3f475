#pragma once
// User names for uids, from the user database (getpwuid_r: /etc/passwd, or LDAP and the like through NSS).
#include <optional>
#include <string>

namespace gpupart {

std::optional<std::string> passwd_name(unsigned uid);  // "alice", or nullopt when the user database has none
std::string user_name(unsigned uid);                   // "alice", or "uid 1234" when unknown

}  // namespace gpupart
