#include "owner_colors.hpp"

#include <array>
#include <cmath>
#include <vector>

namespace gpupart::widgets {
namespace {

// The seven colours of Okabe and Ito's colour-blind-safe set first (what a machine with a few processes
// shows), then 45 more chosen greedily, each the sRGB colour (of a grid of 9 levels a channel, lightness
// L* >= 30, chroma >= 20) farthest in CIEDE2000 from every colour before it and from the greys and whites
// of the floorplan. The smallest distance between any two is 12.2 (tests/widgets/test_owner_palette.cpp).
constexpr std::array<QRgb, 52> kPalette = {
    0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442, 0x0072b2, 0xd55e00, 0xcc79a7, 0x8800cc, 0x666600, 0xaaffee, 0xaa0044,
    0x00ee44, 0xccccff, 0x006666, 0x444466, 0xffaa88, 0xff2244, 0x882200, 0xaa66ff, 0x88aa22, 0x006622, 0x886644,
    0xcceeaa, 0xffaaff, 0x66aaaa, 0x6688ff, 0xaa6666, 0xcc22aa, 0x886688, 0x448800, 0x6666aa, 0xff44ee, 0xaa8844,
    0xeecc88, 0x664400, 0x88aa88, 0x00eeff, 0x44ccaa, 0xff2288, 0xee8888, 0x882266, 0xcc2200, 0xff8822, 0x4444ff,
    0xaa88cc, 0xaaee00, 0xccaacc, 0xff6644, 0x0088aa, 0x228888, 0x44aa44, 0x00ffaa,
};

OwnerLetters& letters() {
    static OwnerLetters owners;
    return owners;
}

}  // namespace

int owner_palette_size() { return static_cast<int>(kPalette.size()); }

QColor owner_palette_color(int index) {
    const int size = owner_palette_size();
    return QColor::fromRgb(kPalette[static_cast<std::size_t>(((index % size) + size) % size)]);
}

OwnerMark owner_mark(int pid, std::uint64_t start_time) { return letters().add({pid, start_time, {}}); }

QChar owner_letter_of(const OwnerMark& mark) { return QChar::fromLatin1(mark.index < 0 ? '?' : mark.letter); }

QColor owner_color(int pid, std::uint64_t start_time) { return owner_palette_color(owner_mark(pid, start_time).index); }

void update_owner_letters(const std::set<std::pair<int, std::uint64_t>>& live) {
    std::vector<OwnerLetters::Alive> alive;
    for (const auto& [pid, start_time] : live) alive.push_back({pid, start_time, {}});
    letters().update(alive);
}

QColor owner_text_color(const QColor& background) {
    // WCAG relative luminance: black text from 0.18 up (the contrast of black and of white are equal there).
    auto linear = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
    const double luminance = 0.2126 * linear(background.redF()) + 0.7152 * linear(background.greenF()) +
                             0.0722 * linear(background.blueF());
    return luminance >= 0.18 ? QColor(0x1a, 0x1a, 0x1a) : QColor(Qt::white);
}

QColor unowned_color() { return QColor(0xc8, 0xc8, 0xc8); }
QColor hole_color() { return QColor(0x9a, 0x9a, 0x9a); }

}  // namespace gpupart::widgets
