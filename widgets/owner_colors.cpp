#include "owner_colors.hpp"

#include <array>

namespace gpupart::widgets {
namespace {

// Twelve hues that stay apart for the common forms of colour blindness (after the Okabe-Ito and
// Tableau palettes), readable behind black text. More owners than this repeat hues, which the legend
// and the hatching of shared TPCs disambiguate.
constexpr std::array<QRgb, 12> kPalette = {
    0xff56b4e9, 0xffe69f00, 0xff009e73, 0xfff0e442, 0xffcc79a7, 0xffd55e00,
    0xff8fbc8f, 0xffb39ddb, 0xff80cbc4, 0xffffab91, 0xffaed581, 0xff90caf9,
};

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: neighbouring pids get unrelated hues
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

QColor owner_color(int pid, std::uint64_t start_time) {
    const std::uint64_t key = mix(static_cast<std::uint64_t>(pid) * 1000003ULL ^ start_time);
    return QColor::fromRgb(kPalette[key % kPalette.size()]);
}

QColor unowned_color() { return QColor(0xc8, 0xc8, 0xc8); }
QColor hole_color() { return QColor(0x9a, 0x9a, 0x9a); }

}  // namespace gpupart::widgets
