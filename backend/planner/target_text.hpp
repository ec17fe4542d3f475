#pragma once
// gpupart plan's --target PID=RATE|PID=SHARE%: a process and what it must reach, as a user types it.
#include <string_view>

#include "planner/plan.hpp"

namespace gpupart {

struct ProcessTarget {
    int pid = 0;
    Target target;
};

// "4242=300" (300 units per second: launches + graph replays, what gpupart measure counts) or
// "4242=50%" (half of the rate it reaches alone on the whole GPU). Throws UserError naming the text and
// what a target looks like.
ProcessTarget parse_process_target(std::string_view text);

}  // namespace gpupart
