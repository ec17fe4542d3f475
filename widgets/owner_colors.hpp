#pragma once
// Colours and letters of process owners. Each process has the letter `gpupart top` gives it (OwnerLetters:
// the lowest free letter when it appears, in pid order among those that appear together, kept for its life)
// and the colour of that letter's index, so the same processes get the same letters and colours in every
// view and in every run, whatever order the registry lists them in. GUI thread only.
#include <cstdint>
#include <set>
#include <utility>

#include <QChar>
#include <QColor>

#include "controller/owner_letters.hpp"

namespace gpupart::widgets {

// 52 colours (one per letter A-Z, a-z), no two closer than kOwnerColourDistance in CIEDE2000 and none
// within kOwnerColourDistanceFromGreys of the unowned fill, the hole outline or the floorplan's whites.
inline constexpr double kOwnerColourDistance = 12;
inline constexpr double kOwnerColourDistanceFromGreys = 14;
int owner_palette_size();
QColor owner_palette_color(int index);  // index: OwnerMark::index (wraps past the palette's end)

// The process's mark (letter, index) in this app; a process not seen before gets the lowest free letter.
OwnerMark owner_mark(int pid, std::uint64_t start_time);
QChar owner_letter_of(const OwnerMark& mark);  // '?' for no mark
QColor owner_color(int pid, std::uint64_t start_time);
// At each refresh, with every live process of the GPU: exits free their letters, newcomers take the lowest
// free ones in pid order (as top does), nobody else's letter changes.
void update_owner_letters(const std::set<std::pair<int, std::uint64_t>>& live);

QColor owner_text_color(const QColor& background);  // black or white, whichever reads better on it
QColor unowned_color();   // a TPC no partitioned process holds (free for anyone unpartitioned)
QColor hole_color();      // outline of a floorswept slot

}  // namespace gpupart::widgets
