#pragma once
// The letter and colour each process has in `gpupart top` for as long as it lives: a process that exits
// frees its letter (and the view says so) but never moves another's, so "B" is the same process from one
// refresh to the next. New processes take the lowest free letter, in pid order among those that appear
// together. (Issue 19: letters moved when a process exited, and B became A.)
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpupart::top {

struct OwnerMark {
    char letter = '?';
    int colour = 0;
};

struct ExitedOwner {
    int pid = 0;
    char letter = '?';
    std::string command;  // as it was shown (already escaped)
};

class OwnerLetters {
public:
    struct Alive {
        int pid = 0;
        std::uint64_t start_time = 0;
        std::string command;
    };
    // Marks every process of `alive` (in any order); returns those seen before and not alive now.
    std::vector<ExitedOwner> update(const std::vector<Alive>& alive);
    OwnerMark mark(int pid, std::uint64_t start_time) const;

private:
    struct Held {
        std::size_t index = 0;
        std::string command;
    };
    std::map<std::pair<int, std::uint64_t>, Held> held_;
};

}  // namespace gpupart::top
