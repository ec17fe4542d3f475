#pragma once
// The profile that the profile tests (test_profile.cpp, test_profile_store.cpp) write and read back: two
// rules that give every match key between them.
#include "controller/profile.hpp"

namespace gpupart::test {

inline Profile sample() {
    Profile profile;
    profile.name = "serving";
    profile.description = "inference on the first four GPCs";
    ProfileRule first;
    first.match.exe = "python3";
    first.match.cmdline = "*serve.py*";
    first.gpu = 0;
    first.tpcs = "gpc0-3";
    ProfileRule second;
    second.match.user = "alice";
    second.match.pid = 4242;
    second.gpu = 1;
    second.tpcs = "25%";
    profile.rules = {first, second};
    return profile;
}

}  // namespace gpupart::test
