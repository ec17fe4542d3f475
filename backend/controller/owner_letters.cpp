#include "controller/owner_letters.hpp"

#include <algorithm>
#include <set>

namespace gpupart {

char owner_letter(std::size_t index) {
    if (index < 26) return static_cast<char>('A' + index);
    if (index < 52) return static_cast<char>('a' + (index - 26));
    return '#';
}

namespace {

std::size_t lowest_free(const std::set<std::size_t>& taken) {
    std::size_t next = 0;
    while (taken.count(next) != 0) ++next;
    return next;
}

}  // namespace

std::set<std::size_t> OwnerLetters::taken() const {
    std::set<std::size_t> taken = held_back_;  // a letter whose exit is still announced is not given out
    for (const auto& [key, held] : held_) taken.insert(held.index);
    return taken;
}

std::vector<ExitedOwner> OwnerLetters::update(const std::vector<Alive>& alive) {
    std::set<std::pair<int, std::uint64_t>> now;
    for (const Alive& a : alive) now.emplace(a.pid, a.start_time);
    std::vector<ExitedOwner> exited;
    for (auto it = held_.begin(); it != held_.end();) {
        if (now.count(it->first) == 0) {
            exited.push_back({it->first.first, owner_letter(it->second.index), static_cast<int>(it->second.index), it->second.command});
            it = held_.erase(it);
        } else {
            ++it;
        }
    }
    std::set<std::size_t> blocked = taken();
    std::vector<Alive> fresh;
    for (const Alive& a : alive)
        if (held_.count({a.pid, a.start_time}) == 0) fresh.push_back(a);
    std::sort(fresh.begin(), fresh.end(), [](const Alive& x, const Alive& y) { return x.pid < y.pid; });
    for (const Alive& a : fresh) {
        const std::size_t next = lowest_free(blocked);
        held_[{a.pid, a.start_time}] = Held{next, a.command};
        blocked.insert(next);
    }
    return exited;
}

OwnerMark OwnerLetters::add(const Alive& process) {
    if (const OwnerMark known = mark(process.pid, process.start_time); known.index >= 0) return known;
    held_[{process.pid, process.start_time}] = Held{lowest_free(taken()), process.command};
    return mark(process.pid, process.start_time);
}

OwnerMark OwnerLetters::mark(int pid, std::uint64_t start_time) const {
    const auto it = held_.find({pid, start_time});
    if (it == held_.end()) return {};
    return {owner_letter(it->second.index), static_cast<int>(it->second.index)};
}

}  // namespace gpupart
