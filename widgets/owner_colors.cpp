#include "owner_colors.hpp"

#include <array>
#include <map>
#include <utility>

namespace gpupart::widgets {
namespace {

// Twelve hues that stay apart for the common forms of colour blindness (Okabe-Ito first, then lighter
// extras), readable behind black text.
constexpr std::array<QRgb, 12> kPalette = {
    0xff56b4e9, 0xffe69f00, 0xff009e73, 0xfff0e442, 0xffcc79a7, 0xffd55e00,
    0xffb39ddb, 0xff8fbc8f, 0xff80cbc4, 0xffffab91, 0xffaed581, 0xff6b8fd6,
};

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: neighbouring pids get unrelated hues
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Colours handed out in this process: once a process has a colour it keeps it in every view for as
// long as it lives; a newcomer takes its preferred hue when free, else the next free one, so up to
// twelve owners never share a colour.
std::map<std::pair<int, std::uint64_t>, std::size_t>& assigned() {
    static std::map<std::pair<int, std::uint64_t>, std::size_t> colours;
    return colours;
}

}  // namespace

QColor owner_color(int pid, std::uint64_t start_time) {
    auto& colours = assigned();
    const auto key = std::make_pair(pid, start_time);
    if (const auto found = colours.find(key); found != colours.end()) return QColor::fromRgb(kPalette[found->second]);
    const std::size_t preferred = mix(static_cast<std::uint64_t>(pid) * 1000003ULL ^ start_time) % kPalette.size();
    std::size_t chosen = preferred;
    for (std::size_t step = 0; step < kPalette.size(); ++step) {
        const std::size_t candidate = (preferred + step) % kPalette.size();
        bool used = false;
        for (const auto& [other, index] : colours) used = used || index == candidate;
        if (!used) {
            chosen = candidate;
            break;
        }
    }
    colours[key] = chosen;
    return QColor::fromRgb(kPalette[chosen]);
}

void forget_owner_colors_except(const std::set<std::pair<int, std::uint64_t>>& live) {
    auto& colours = assigned();
    for (auto it = colours.begin(); it != colours.end();) it = live.count(it->first) ? std::next(it) : colours.erase(it);
}

QColor unowned_color() { return QColor(0xc8, 0xc8, 0xc8); }
QColor hole_color() { return QColor(0x9a, 0x9a, 0x9a); }

}  // namespace gpupart::widgets
