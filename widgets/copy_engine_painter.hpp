#pragma once
// The copy-engine wiring of one GPU as a picture: logical copy engines (LCEs) on the left, physical copy
// engines (PCEs) on the right, an edge for every bit of an LCE's PCE mask. PCEs that more than one LCE
// drives are highlighted: copies on those LCEs interfere (Bakita & Anderson, RTAS 2024, rule R8). No widgets: the view and
// `gpupart export --png/--svg` paint through this one painter, so both show the same picture.
// Text is laid out with the application's font database: a QGuiApplication must exist.
#include <vector>

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QTransform>

#include "model/gpu.hpp"

namespace gpupart::widgets {

struct CopyEngineBox {
    enum class Kind { lce, pce };
    Kind kind = Kind::lce;
    int index = 0;        // LCE or PCE number
    QRectF rect;          // in picture coordinates
    QString label;        // "LCE0", "PCE12"
    QString detail;       // second text: "PCEs 12, 14" or "LCE 0, 2"
    QString tooltip;      // several lines: what it is, what it drives or is driven by, the source
    QColor color;         // an LCE's colour (its edges share it); unused for PCEs
    bool grce = false;    // LCE with the GRCE caps bit
    bool shared = false;  // PCE driven by more than one LCE
    bool driven = true;   // PCE that some LCE's mask names
};

struct CopyEngineEdge {
    int lce_box = 0;  // indices into CopyEngineLayout::boxes
    int pce_box = 0;
    QPointF from;     // right edge of the LCE box (top to bottom: its bottom edge)
    QPointF to;       // left edge of the PCE box (top to bottom: its top edge)
};

// Where everything goes, in picture coordinates (1 unit = 1 pixel at scale 1). Computed once per GPU;
// the widget keeps it for painting and hit testing.
struct CopyEngineLayout {
    // Left to right (LCE column, PCE column: tall, for files and tall panes) or top to bottom (LCE row over a
    // PCE row: wide, for a bottom dock). Same boxes, edges and legend; only the places differ.
    enum class Flow { left_to_right, top_to_bottom };
    Flow flow = Flow::left_to_right;
    QSizeF size;
    QString title;
    QString unavailable;  // non-empty when no source gave the wiring: the reason, drawn instead of a graph
    std::vector<CopyEngineBox> boxes;
    std::vector<CopyEngineEdge> edges;
    QRectF title_rect;
    QRectF lce_heading, pce_heading;
    // Below the graph: what the highlights mean, each pair of LCEs that share PCEs, and the source.
    struct LegendRow {
        enum class Kind { shared, grce, undriven, finding, source };
        Kind kind = Kind::source;
        QRectF rect;  // the whole row; a swatch, where the kind has one, sits at its left
        QString text;
    };
    std::vector<LegendRow> legend;

    // The box under a point (picture coordinates), or nullptr.
    const CopyEngineBox* box_at(QPointF point) const;
};

CopyEngineLayout layout_copy_engines(const Gpu& gpu, CopyEngineLayout::Flow flow = CopyEngineLayout::Flow::left_to_right);

// Picture -> target: scaled to fit, aspect ratio kept, centred. Its inverse maps mouse positions back.
QTransform copy_engine_transform(QSizeF picture, const QRectF& target);

QSizeF copy_engine_picture_size(const Gpu& gpu);
void paint_copy_engines(QPainter& painter, const QRectF& target, const Gpu& gpu);
// The same, from a layout made earlier; `hovered` (a box of `layout`) is drawn with its edges raised and
// the rest faded, so the widget can show what one engine is wired to.
void paint_copy_engines(QPainter& painter, const QRectF& target, const CopyEngineLayout& layout,
                        const CopyEngineBox* hovered = nullptr);

// Files for `gpupart export` and File > Export. Written atomically; a failure throws UserError (one line).
void export_copy_engines_png(const Gpu& gpu, const QString& path);
void export_copy_engines_svg(const Gpu& gpu, const QString& path);

}  // namespace gpupart::widgets
