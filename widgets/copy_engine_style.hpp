#pragma once
// Sizes, fonts and colours of the copy-engine picture, shared by its layout (which measures text) and
// its painter (which draws it), so the two never disagree. Internal to gpupart_render.
#include <QColor>
#include <QFont>
#include <QGuiApplication>

namespace gpupart::widgets::copy_engine_style {

inline constexpr double kMargin = 24;
inline constexpr double kLceWidth = 170;
inline constexpr double kLceHeight = 50;
inline constexpr double kLceGap = 14;
inline constexpr double kPceWidth = 150;
inline constexpr double kPceHeight = 30;
inline constexpr double kPceGap = 8;
inline constexpr double kWireWidth = 260;  // horizontal room for the edges between the columns
// Top to bottom: PCEs side by side (label over detail), the edges in a band between the rows.
inline constexpr double kRowPceWidth = 84;
inline constexpr double kRowPceHeight = 44;
inline constexpr double kWireHeight = 100;
inline constexpr double kSwatchWidth = 34;

// Pixel sizes, not points: the picture has the same proportions on every screen and in every file.
inline QFont font(int pixels, bool bold = false) {
    QFont f = QGuiApplication::font();
    f.setPixelSize(pixels);
    f.setBold(bold);
    return f;
}
inline QFont title_font() { return font(16, true); }
inline QFont heading_font() { return font(11, true); }
inline QFont label_font() { return font(13, true); }
inline QFont detail_font() { return font(11); }
inline QFont legend_font() { return font(12); }

inline const QColor kText{0x20, 0x24, 0x28};
inline const QColor kMuted{0x5f, 0x6b, 0x76};
inline const QColor kSharedFill{0xfd, 0xe3, 0xcf};
inline const QColor kSharedBorder{0xd5, 0x5e, 0x00};  // warning orange: the R8 highlight
inline const QColor kSharedText{0x9c, 0x3a, 0x00};
inline const QColor kPceFill{0xf3, 0xf5, 0xf7};
inline const QColor kPceBorder{0x9a, 0xa5, 0xb1};
inline const QColor kGrceBadge{0x1d, 0x35, 0x57};

// LCE colours, each LCE's edges in its own: blues, greens and purples, kept away from the orange that
// marks shared PCEs.
inline QColor lce_color(int index) {
    static const QColor palette[] = {QColor(0x00, 0x72, 0xb2), QColor(0x00, 0x9e, 0x73), QColor(0x6a, 0x51, 0xa3),
                                     QColor(0x2a, 0x9d, 0xb8), QColor(0x4d, 0x5b, 0x6b), QColor(0xb0, 0x4a, 0x8c),
                                     QColor(0x5b, 0x8c, 0x2a), QColor(0x34, 0x4e, 0xad)};
    return palette[static_cast<unsigned>(index) % (sizeof palette / sizeof palette[0])];
}

}  // namespace gpupart::widgets::copy_engine_style
