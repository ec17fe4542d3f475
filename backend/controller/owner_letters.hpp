#pragma once
// The letter each process has in every view (`gpupart top`'s floorplan and table, the app's tiles and rows)
// for as long as it lives: a process that exits frees its letter (and the view says so) but never moves
// another's, so "B" is the same process from one refresh to the next. New processes take the lowest free
// letter, in pid order among those that appear together.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpupart {

// The letter of the process at `index` in pid order: A-Z, a-z, then '#'.
char owner_letter(std::size_t index);

struct OwnerMark {
    char letter = '?';
    int index = -1;  // the letter's index (stable for the process's life): views pick a colour from it
};

struct ExitedOwner {
    int pid = 0;
    char letter = '?';
    int index = -1;       // the letter's index (what OwnerLetters::hold_back takes)
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
    // Letters (by index) that update() gives to no new process until the next call: a view keeps the letter
    // of a process whose exit it still announces ("K exited"), so "K" never names two processes at once.
    void hold_back(std::set<std::size_t> indices) { held_back_ = std::move(indices); }
    // The mark of one process, giving it the lowest free letter if it has none yet (a view that meets a
    // process between two updates, e.g. an export); no other process loses or changes its letter.
    OwnerMark add(const Alive& process);

private:
    struct Held {
        std::size_t index = 0;
        std::string command;
    };
    // The letters no newcomer may take: those held and those held back.
    std::set<std::size_t> taken() const;
    std::map<std::pair<int, std::uint64_t>, Held> held_;
    std::set<std::size_t> held_back_;
};

}  // namespace gpupart
