// Painting the copy-engine layout, and writing it to PNG and SVG files.
#include "copy_engine_painter.hpp"

#include <cmath>

#include <QBuffer>
#include <QImage>
#include <QImageWriter>
#include <QPainterPath>
#include <QSvgGenerator>

#include "copy_engine_style.hpp"
#include "export_file.hpp"
#include "model/user_error.hpp"

namespace gpupart::widgets {
namespace {

using namespace copy_engine_style;
using Row = CopyEngineLayout::LegendRow;

bool touches(const CopyEngineEdge& edge, const CopyEngineLayout& layout, const CopyEngineBox* box) {
    if (box == nullptr) return false;
    const auto index = static_cast<int>(box - layout.boxes.data());
    return edge.lce_box == index || edge.pce_box == index;
}

void paint_edges(QPainter& p, const CopyEngineLayout& layout, const CopyEngineBox* hovered) {
    p.setBrush(Qt::NoBrush);
    for (const CopyEngineEdge& edge : layout.edges) {
        const CopyEngineBox& lce = layout.boxes[static_cast<std::size_t>(edge.lce_box)];
        const CopyEngineBox& pce = layout.boxes[static_cast<std::size_t>(edge.pce_box)];
        QColor color = lce.color;
        double width = pce.shared ? 2.2 : 1.5;
        if (hovered != nullptr) {
            // What the hovered engine is wired to stands out; everything else steps back.
            if (touches(edge, layout, hovered)) width += 1.2;
            else color.setAlpha(45);
        }
        // Curves leave and arrive along the flow (rightwards, or downwards when the PCEs are a row below).
        const bool down = layout.flow == CopyEngineLayout::Flow::top_to_bottom;
        const QPointF along = down ? QPointF(0, 1) : QPointF(1, 0);
        const QPointF across(along.y(), along.x());
        const double distance = down ? edge.to.y() - edge.from.y() : edge.to.x() - edge.from.x();
        QPainterPath path(edge.from);
        path.cubicTo(edge.from + along * distance * 0.45, edge.to - along * distance * 0.45, edge.to - along * 5);
        p.setPen(QPen(color, width, Qt::SolidLine, Qt::RoundCap));
        p.drawPath(path);
        // A small arrowhead: edges read LCE -> PCE.
        QPainterPath head;
        head.moveTo(edge.to);
        head.lineTo(edge.to - along * 7 - across * 3.5);
        head.lineTo(edge.to - along * 7 + across * 3.5);
        head.closeSubpath();
        p.fillPath(head, color);
    }
}

void paint_grce_badge(QPainter& p, const QRectF& box) {
    const QRectF badge(box.right() - 50, box.top() + 7, 42, 16);
    p.setPen(Qt::NoPen);
    p.setBrush(kGrceBadge);
    p.drawRoundedRect(badge, 8, 8);
    p.setPen(Qt::white);
    p.setFont(font(10, true));
    p.drawText(badge, Qt::AlignCenter, QStringLiteral("GRCE"));
}

void paint_lce(QPainter& p, const CopyEngineBox& box, bool hovered) {
    p.setPen(QPen(hovered ? kText : box.color, hovered ? 2.2 : 1.4));
    p.setBrush(Qt::white);
    p.drawRoundedRect(box.rect, 6, 6);
    // A strip of the LCE's colour on the left ties the box to its edges.
    QPainterPath strip;
    strip.addRoundedRect(QRectF(box.rect.left(), box.rect.top(), 12, box.rect.height()), 6, 6);
    p.fillPath(strip.intersected([&] {
        QPainterPath clip;
        clip.addRect(QRectF(box.rect.left(), box.rect.top(), 6, box.rect.height()));
        return clip;
    }()), box.color);
    p.setPen(kText);
    p.setFont(label_font());
    p.drawText(QRectF(box.rect.left() + 14, box.rect.top() + 6, box.rect.width() - 20, 18), Qt::AlignLeft | Qt::AlignVCenter, box.label);
    p.setPen(kMuted);
    p.setFont(detail_font());
    p.drawText(QRectF(box.rect.left() + 14, box.rect.top() + 26, box.rect.width() - 20, 16), Qt::AlignLeft | Qt::AlignVCenter, box.detail);
    if (box.grce) paint_grce_badge(p, box.rect);
}

void paint_pce(QPainter& p, const CopyEngineBox& box, bool hovered) {
    QPen pen(box.shared ? kSharedBorder : kPceBorder, box.shared ? 2.0 : 1.0);
    if (!box.driven) pen.setStyle(Qt::DashLine);
    if (hovered) pen = QPen(kText, 2.2);
    p.setPen(pen);
    p.setBrush(box.shared ? kSharedFill : (box.driven ? kPceFill : QColor(Qt::white)));
    p.drawRoundedRect(box.rect, 5, 5);
    // A wide box has its label and detail side by side, a box in a row of PCEs one over the other.
    const bool stacked = box.rect.height() >= 40;
    const QRectF text = box.rect.adjusted(stacked ? 6 : 10, stacked ? 4 : 0, stacked ? -6 : -10, stacked ? -4 : 0);
    p.setPen(box.driven ? kText : kMuted);
    p.setFont(label_font());
    p.drawText(text, stacked ? Qt::AlignHCenter | Qt::AlignTop : Qt::AlignLeft | Qt::AlignVCenter, box.label);
    p.setPen(box.shared ? kSharedText : kMuted);
    p.setFont(box.shared ? font(11, true) : detail_font());
    p.drawText(text, stacked ? Qt::AlignHCenter | Qt::AlignBottom : Qt::AlignRight | Qt::AlignVCenter, box.detail);
}

void paint_legend(QPainter& p, const CopyEngineLayout& layout) {
    for (const Row& row : layout.legend) {
        QRectF text = row.rect;
        const QRectF swatch(row.rect.left(), row.rect.top() + 1, kSwatchWidth, 16);
        switch (row.kind) {
        case Row::Kind::shared:
            p.setPen(QPen(kSharedBorder, 2));
            p.setBrush(kSharedFill);
            p.drawRoundedRect(swatch, 4, 4);
            break;
        case Row::Kind::grce:
            p.setPen(Qt::NoPen);
            p.setBrush(kGrceBadge);
            p.drawRoundedRect(swatch, 8, 8);
            p.setPen(Qt::white);
            p.setFont(font(10, true));
            p.drawText(swatch, Qt::AlignCenter, QStringLiteral("GRCE"));
            break;
        case Row::Kind::undriven:
            p.setPen(QPen(kPceBorder, 1, Qt::DashLine));
            p.setBrush(Qt::white);
            p.drawRoundedRect(swatch, 4, 4);
            break;
        case Row::Kind::finding:
        case Row::Kind::source: break;
        }
        if (row.kind == Row::Kind::shared || row.kind == Row::Kind::grce || row.kind == Row::Kind::undriven)
            text.setLeft(swatch.right() + 10);
        p.setPen(row.kind == Row::Kind::finding ? kSharedText : (row.kind == Row::Kind::source ? kMuted : kText));
        p.setFont(row.kind == Row::Kind::source ? detail_font() : legend_font());
        p.drawText(text, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, row.text);
    }
}

[[noreturn]] void fail(const QString& path, const QString& why) {
    throw UserError(QStringLiteral("cannot write %1: %2").arg(path, why).simplified().toStdString());
}

}  // namespace

void paint_copy_engines(QPainter& painter, const QRectF& target, const CopyEngineLayout& layout, const CopyEngineBox* hovered) {
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.setTransform(copy_engine_transform(layout.size, target), true);
    painter.setPen(kText);
    painter.setFont(title_font());
    painter.drawText(layout.title_rect, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignVCenter, layout.title);
    if (!layout.unavailable.isEmpty()) {
        painter.setPen(kText);
        painter.setFont(font(13));
        const double top = layout.title_rect.bottom() + 14;
        painter.drawText(QRectF(layout.title_rect.left(), top, layout.title_rect.width(), layout.size.height() - top),
                         Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, layout.unavailable);
    } else {
        painter.setPen(kMuted);
        painter.setFont(heading_font());
        painter.drawText(layout.lce_heading, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("LOGICAL (LCE)"));
        painter.drawText(layout.pce_heading, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("PHYSICAL (PCE)"));
        paint_edges(painter, layout, hovered);
        for (const CopyEngineBox& box : layout.boxes) {
            if (box.kind == CopyEngineBox::Kind::lce) paint_lce(painter, box, &box == hovered);
            else paint_pce(painter, box, &box == hovered);
        }
    }
    paint_legend(painter, layout);
    painter.restore();
}

void paint_copy_engines(QPainter& painter, const QRectF& target, const Gpu& gpu) {
    paint_copy_engines(painter, target, layout_copy_engines(gpu));
}

void export_copy_engines_png(const Gpu& gpu, const QString& path) {
    const CopyEngineLayout layout = layout_copy_engines(gpu);
    // Twice the picture's size: sharp on high-DPI screens and in documents, still a small file.
    const QSize pixels(static_cast<int>(std::ceil(layout.size.width() * 2)), static_cast<int>(std::ceil(layout.size.height() * 2)));
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        paint_copy_engines(painter, QRectF(QPointF(0, 0), QSizeF(pixels)), layout);
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, "png");
    if (!writer.write(image)) fail(path, writer.errorString());
    write_export_file(path, bytes, "copy-engine image");
}

void export_copy_engines_svg(const Gpu& gpu, const QString& path) {
    const CopyEngineLayout layout = layout_copy_engines(gpu);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(layout.size.toSize());
    generator.setViewBox(QRectF(QPointF(0, 0), layout.size));
    generator.setTitle(layout.title);
    generator.setDescription(QStringLiteral("gpupart: logical -> physical copy-engine wiring"));
    QPainter painter;
    if (!painter.begin(&generator)) fail(path, QStringLiteral("the SVG generator did not start"));
    painter.fillRect(QRectF(QPointF(0, 0), layout.size), Qt::white);
    paint_copy_engines(painter, QRectF(QPointF(0, 0), layout.size), layout);
    painter.end();
    write_export_file(path, bytes, "copy-engine image");
}

}  // namespace gpupart::widgets
