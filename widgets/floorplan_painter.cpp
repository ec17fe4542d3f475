#include "floorplan_painter.hpp"

#include <QBuffer>
#include <QFontMetricsF>
#include <QImage>
#include <QPainterPath>
#include <QSvgGenerator>

#include "export_file.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "owner_colors.hpp"

namespace gpupart::widgets {
namespace {

const QColor kSelection(0x0d, 0x47, 0xa1);
const QColor kBoxFill(0xf7, 0xf7, 0xf9);
const QColor kBoxBorder(0x70, 0x78, 0x80);
const QColor kText(0x1a, 0x1a, 0x1a);

QFont font_of(int pixel_size, bool bold) {
    QFont font;
    font.setPixelSize(pixel_size);
    font.setBold(bold);
    return font;
}

// Diagonal stripes in picture units (a pattern brush stays one device pixel thin whatever the zoom, and
// vanished on a 4K screen), in turn in each of `colours`; the caller clips to the tile.
void paint_stripes(QPainter& painter, const QRectF& rect, const std::vector<QColor>& colours) {
    constexpr double kPitch = 11;
    int stripe = 0;
    for (double x = rect.left() - rect.height(); x < rect.right(); x += kPitch, ++stripe) {
        painter.setPen(QPen(colours[static_cast<std::size_t>(stripe) % colours.size()], 4, Qt::SolidLine, Qt::FlatCap));
        painter.drawLine(QPointF(x, rect.bottom()), QPointF(x + rect.height(), rect.top()));
    }
}

void paint_tile_fill(QPainter& painter, const QRectF& rect, const std::vector<const FloorplanOwner*>& owners) {
    if (owners.empty()) {
        painter.fillRect(rect, unowned_color());
        return;
    }
    painter.fillRect(rect, owners.front()->color);
    if (owners.size() > 1) {
        // Shared (and only then): striped in the other holders' colours; the letters say who they are.
        std::vector<QColor> others;
        for (std::size_t i = 1; i < owners.size(); ++i) others.push_back(owners[i]->color);
        paint_stripes(painter, rect, others);
    }
}

// The owners' letters of a tile ("A", "AB", "ABC+2"), as many as fit `width` at the painter's font.
QString owner_letters(const QFontMetricsF& metrics, const std::vector<const FloorplanOwner*>& owners, double width) {
    QString letters;
    for (std::size_t i = 0; i < owners.size(); ++i) {
        const QString more = i + 1 < owners.size() ? QString("+%1").arg(owners.size() - i - 1) : QString();
        if (metrics.horizontalAdvance(letters + owners[i]->letter + more) > width)
            return letters.isEmpty() ? QString("+%1").arg(owners.size()) : letters + QString("+%1").arg(owners.size() - i);
        letters += owners[i]->letter;
    }
    return letters;
}

QString box_title(const Gpu& gpu, const FloorplanGpcBox& box, int tpc_count) {
    if (!box.gpc) return QString("GPC not determined · %1 TPC%2").arg(tpc_count).arg(tpc_count == 1 ? "" : "s");
    const Gpc& gpc = gpu.gpcs.at(static_cast<std::size_t>(*box.gpc));
    QString title = QString("GPC %1").arg(*box.gpc);
    if (gpc.physical_id && *gpc.physical_id != *box.gpc) title += QString(" (phys %1)").arg(*gpc.physical_id);
    return title + QString(" · %1 TPC%2 · %3 SMs").arg(tpc_count).arg(tpc_count == 1 ? "" : "s")
                       .arg(static_cast<int>(sms_of(gpu, gpc_tpcs(gpu, *box.gpc)).size()));
}

void paint_legend(QPainter& painter, const FloorplanGeometry& geometry, const FloorplanScene& scene) {
    painter.setFont(font_of(11, false));
    for (int i = 0; i < geometry.legend_entries() && i < scene.legend_entry_count(); ++i) {
        const QRectF entry = geometry.legend_entry(i);
        const QRectF swatch(entry.left() + 2, entry.top() + 4, 22, entry.height() - 8);
        QString text;
        switch (scene.legend_kind(i)) {
        case LegendKind::owner: {
            // A chip: the letter on the owner's colour (as on its tiles), then pid and program.
            const FloorplanOwner& owner = scene.owners[static_cast<std::size_t>(i)];
            const QRectF chip(entry.left() + 2, entry.top() + 3, 18, entry.height() - 6);
            painter.fillRect(chip, owner.color);
            painter.setPen(owner_text_color(owner.color));
            painter.setFont(font_of(12, true));
            painter.drawText(chip, Qt::AlignCenter, QString(owner.letter));
            painter.setFont(font_of(11, false));
            text = QString("%1 · %2").arg(owner.label).arg(owner.mask.count());
            break;
        }
        case LegendKind::free:
            painter.fillRect(swatch, unowned_color());
            text = "free (drop here to release)";
            break;
        case LegendKind::shared:
            painter.save();
            painter.setClipRect(swatch);
            painter.fillRect(swatch, QColor(0xe0, 0xe0, 0xe0));
            paint_stripes(painter, swatch, {QColor(0x60, 0x60, 0x60)});
            painter.restore();
            text = "hatched: held by several (letters)";
            break;
        case LegendKind::hole:
            painter.setPen(QPen(hole_color(), 1, Qt::DashLine));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(swatch);
            text = "floorswept hole (no TPC)";
            break;
        }
        if (scene.highlighted_legend == i) {
            painter.setPen(QPen(kSelection, 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(entry.adjusted(0, 1, 0, -1));
        }
        painter.setPen(kText);
        const double indent = scene.legend_kind(i) == LegendKind::owner ? 24 : 30;
        painter.drawText(entry.adjusted(indent, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         painter.fontMetrics().elidedText(text, Qt::ElideRight, static_cast<int>(entry.width() - indent) - 2));
    }
}

}  // namespace

void paint_floorplan(QPainter& painter, const FloorplanGeometry& geometry, const FloorplanScene& scene) {
    const Gpu& gpu = *scene.gpu;
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);

    for (const FloorplanGpcBox& box : geometry.boxes()) {
        painter.setPen(QPen(kBoxBorder, 1));
        painter.setBrush(kBoxFill);
        painter.drawRoundedRect(box.box, 6, 6);
        const int tpc_count = geometry.tpcs_of_box(box).count();
        painter.setPen(kText);
        painter.setFont(font_of(12, true));
        painter.drawText(box.header.adjusted(FloorplanGeometry::kPadding, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         box_title(gpu, box, tpc_count));
    }

    for (const FloorplanTile& tile : geometry.tiles()) {
        if (tile.hole) {
            painter.setPen(QPen(hole_color(), 1, Qt::DashLine));
            painter.setBrush(Qt::NoBrush);
            painter.drawRoundedRect(tile.rect.adjusted(1, 1, -1, -1), 4, 4);
            painter.setPen(hole_color());
            painter.setFont(font_of(10, false));
            painter.drawText(tile.rect, Qt::AlignCenter, QString("hole"));
            continue;
        }
        const auto owners = scene.owners_of(tile.tpc_key);
        painter.save();
        QPainterPath clip;
        clip.addRoundedRect(tile.rect, 4, 4);
        painter.setClipPath(clip);
        paint_tile_fill(painter, tile.rect, owners);
        painter.restore();
        const bool selected = scene.selection.test(tile.tpc_key);
        painter.setPen(selected ? QPen(kSelection, 3) : QPen(QColor(0x55, 0x55, 0x55), 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRoundedRect(tile.rect.adjusted(1, 1, -1, -1), 4, 4);
        if (selected) painter.fillRect(tile.rect.adjusted(3, 3, -3, -3), QColor(0x0d, 0x47, 0xa1, 40));
        if (const FloorplanGrant* grant = scene.grant_of(tile.tpc_key)) {
            // An SMLP grant: a band in the holder's colour along the bottom, outlined so that it shows on a
            // tile of the same owner colour; a holder that died has it hatched.
            const QRectF band(tile.rect.left() + 6, tile.rect.bottom() - 8, tile.rect.width() - 12, 5);
            painter.setPen(QPen(kText, 1));
            painter.setBrush(QBrush(grant->color, grant->alive ? Qt::SolidPattern : Qt::BDiagPattern));
            painter.drawRect(band);
        }
        if (scene.focus == tile.tpc_key) {  // the keyboard's tile cursor, in the text's colour so it shows on any fill
            painter.setPen(QPen(owners.empty() ? kText : owner_text_color(owners.front()->color), 2, Qt::DashLine));
            painter.drawRect(tile.rect.adjusted(5, 5, -5, -5));
        }
        const Tpc* tpc = tile.tpc_index >= 0 ? &gpu.tpcs[static_cast<std::size_t>(tile.tpc_index)] : nullptr;
        // Text in black or white, whichever reads on the owner's colour; the owners' letters (top's) at the
        // left of the first line, the TPC number at its right.
        painter.setPen(owners.empty() ? kText : owner_text_color(owners.front()->color));
        painter.setFont(font_of(15, true));
        const QRectF first_line(tile.rect.left() + 6, tile.rect.top() + 4, tile.rect.width() - 12, 22);
        const QString number = tile.tpc_key >= 0 ? QString::number(tile.tpc_key) : QString("TPC ?");
        if (owners.empty()) {
            painter.drawText(first_line, Qt::AlignCenter, number);
        } else {
            painter.drawText(first_line, Qt::AlignVCenter | Qt::AlignRight, number);
            const double room = first_line.width() - painter.fontMetrics().horizontalAdvance(number) - 6;
            painter.drawText(first_line, Qt::AlignVCenter | Qt::AlignLeft,
                             owner_letters(QFontMetricsF(painter.font()), owners, room));
        }
        if (tpc != nullptr && !tpc->sms.empty()) {
            QStringList sms;
            for (const int sm : tpc->sms) sms << QString::number(sm);
            painter.setFont(font_of(10, false));
            painter.drawText(QRectF(tile.rect.left(), tile.rect.top() + 26, tile.rect.width(), 18), Qt::AlignCenter,
                             "SM " + sms.join("·"));
        }
    }
    paint_legend(painter, geometry, scene);
    painter.restore();
}

namespace {

// An exported picture leaves the app: it carries its title (GPU and where the topology came from).
constexpr double kTitleHeight = 30;

QSizeF export_size(const FloorplanGeometry& geometry) { return geometry.size() + QSizeF(0, kTitleHeight); }

// What an exported picture shows: the GPU and who owns what, never the operator's live state (selection,
// keyboard focus, the legend entry under a drag).
FloorplanScene exported(const FloorplanScene& scene) {
    FloorplanScene shown = scene;
    shown.selection = {};
    shown.focus.reset();
    shown.highlighted_legend.reset();
    return shown;
}

void paint_export(QPainter& painter, const FloorplanGeometry& geometry, const FloorplanScene& live) {
    const FloorplanScene scene = exported(live);
    painter.fillRect(QRectF(QPointF(0, 0), export_size(geometry)), Qt::white);
    painter.setPen(kText);
    painter.setFont(font_of(15, true));
    painter.drawText(QRectF(FloorplanGeometry::kGap + 4, 0, geometry.size().width(), kTitleHeight),
                     Qt::AlignVCenter | Qt::AlignLeft, scene.title);
    painter.translate(0, kTitleHeight);
    paint_floorplan(painter, geometry, scene);
}

}  // namespace

void export_floorplan_png(const FloorplanScene& scene, const QString& path, double scale) {
    const FloorplanGeometry geometry = FloorplanGeometry::layout(*scene.gpu, scene.legend_entry_count(), static_cast<int>(scene.owners.size()));
    QImage image((export_size(geometry) * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.scale(scale, scale);
        paint_export(painter, geometry, scene);
    }
    // Encoded in memory, then written by the one safe replace every gpupart file goes through.
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG"))
        throw UserError(one_line("cannot encode the floorplan as PNG for " + path.toStdString()));
    write_export_file(path, bytes, "floorplan image");
}

void export_floorplan_svg(const FloorplanScene& scene, const QString& path) {
    const FloorplanGeometry geometry = FloorplanGeometry::layout(*scene.gpu, scene.legend_entry_count(), static_cast<int>(scene.owners.size()));
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(export_size(geometry).toSize());
        generator.setViewBox(QRectF(QPointF(0, 0), export_size(geometry)));
        generator.setTitle(scene.title);
        generator.setDescription("gpupart floorplan: GPCs, TPC slots (mask bit, SMs), owners");
        QPainter painter(&generator);
        paint_export(painter, geometry, scene);
    }
    write_export_file(path, bytes, "floorplan image");
}

}  // namespace gpupart::widgets
