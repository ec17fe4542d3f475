// Where the copy-engine picture puts each box, edge and legend row, and what each box's tooltip says.
#include <algorithm>
#include <cmath>
#include <map>

#include <QFontMetricsF>
#include <QStringList>

#include "copy_engine_painter.hpp"
#include "copy_engine_style.hpp"
#include "fact_qtext.hpp"
#include "model/gpu_queries.hpp"
#include "report/topology_text.hpp"

namespace gpupart::widgets {
namespace {

using namespace copy_engine_style;
using Row = CopyEngineLayout::LegendRow;

std::vector<int> bits_of(std::uint32_t mask) {
    std::vector<int> bits;
    for (int bit = 0; bit < 32; ++bit)
        if ((mask >> bit) & 1U) bits.push_back(bit);
    return bits;
}

QString joined(const std::vector<int>& numbers, const QString& prefix = {}) {
    QStringList parts;
    for (const int n : numbers) parts << prefix + QString::number(n);
    return parts.join(QStringLiteral(", "));
}

// PCEs the picture shows: the count a source gave, widened to the highest PCE any mask names, so an
// edge never points at a box that is not there.
int pce_count(const CopyEngines& engines) {
    int count = engines.pce_count.known() ? *engines.pce_count.value : 0;
    for (const LogicalCopyEngine& lce : engines.lces)
        for (const int bit : bits_of(lce.pce_mask)) count = std::max(count, bit + 1);
    return count;
}

double wrapped_height(const QFont& font, double width, const QString& text) {
    return QFontMetricsF(font).boundingRect(QRectF(0, 0, width, 10000), Qt::TextWordWrap, text).height();
}

QString lce_tooltip(const Gpu& gpu, const LogicalCopyEngine& lce) {
    QString tip = QStringLiteral("LCE%1: logical copy engine%2").arg(lce.index).arg(lce.grce ? QStringLiteral(", graphics copy engine (GRCE)") : QString());
    const auto pces = bits_of(lce.pce_mask);
    tip += pces.empty() ? QStringLiteral("\ndrives no physical copy engine") : QStringLiteral("\ndrives %1").arg(joined(pces, QStringLiteral("PCE")));
    for (const SharedCopyEngines& pair : shared_copy_engines(gpu)) {
        if (pair.lce_a != lce.index && pair.lce_b != lce.index) continue;
        tip += QStringLiteral("\nshares %1 with LCE%2: copies on the two interfere (Bakita & Anderson, RTAS 2024, rule R8)")
                   .arg(joined(bits_of(pair.pces), QStringLiteral("PCE")))
                   .arg(pair.lce_a == lce.index ? pair.lce_b : pair.lce_a);
    }
    QStringList caps;
    if (lce.grce) caps << QStringLiteral("GRCE");
    if (lce.shared) caps << QStringLiteral("SHARED");
    if (!caps.isEmpty() || !lce.caps_hex.empty())
        tip += QStringLiteral("\ncaps: %1%2").arg(caps.isEmpty() ? QStringLiteral("none") : caps.join(QStringLiteral(", ")),
                                                lce.caps_hex.empty() ? QString() : QStringLiteral(" (0x%1)").arg(QString::fromStdString(lce.caps_hex)));
    return tip + QStringLiteral("\nsource: ") + provenance_text(lce.from);
}

QString pce_tooltip(const Gpu& gpu, int pce, const std::vector<const LogicalCopyEngine*>& drivers) {
    QString tip = QStringLiteral("PCE%1: physical copy engine").arg(pce);
    if (drivers.empty())
        return tip + QStringLiteral("\nno LCE's PCE mask names it\nsource: ") + provenance_text(gpu.copy_engines.pce_count.from);
    QStringList names;
    for (const LogicalCopyEngine* lce : drivers) names << QStringLiteral("LCE%1%2").arg(lce->index).arg(lce->grce ? QStringLiteral(" (GRCE)") : QString());
    if (drivers.size() > 1)
        tip += QStringLiteral("\nshared physical copy engine (Bakita & Anderson, RTAS 2024, rule R8): copies on %1 compete for it").arg(names.join(QStringLiteral(" and ")));
    else
        tip += QStringLiteral("\ndriven by %1 only").arg(names.front());
    return tip + QStringLiteral("\nsource: ") + provenance_text(drivers.front()->from);
}

}  // namespace

const CopyEngineBox* CopyEngineLayout::box_at(QPointF point) const {
    for (const CopyEngineBox& box : boxes)
        if (box.rect.contains(point)) return &box;
    return nullptr;
}

CopyEngineLayout layout_copy_engines(const Gpu& gpu, CopyEngineLayout::Flow flow) {
    CopyEngineLayout layout;
    layout.flow = flow;
    const bool rows = flow == CopyEngineLayout::Flow::top_to_bottom;
    const auto& lces = gpu.copy_engines.lces;
    const int pces = pce_count(gpu.copy_engines);
    const int lce_total = static_cast<int>(lces.size());
    // Top to bottom, the picture is as wide as its longer row (and wide enough for a readable legend).
    const double pce_row = pces * (kRowPceWidth + kPceGap) - kPceGap;
    const double lce_row = lce_total * (kLceWidth + kLceGap) - kLceGap;
    const double row_span = std::max({pce_row, lce_row, 560.0});
    const double width = rows ? kMargin * 2 + row_span : kMargin * 2 + kLceWidth + kWireWidth + kPceWidth;
    const double inner = width - 2 * kMargin;
    const double pce_x = width - kMargin - kPceWidth;
    layout.title = QStringLiteral("Copy engines of %1: LCE → PCE wiring").arg(QString::fromStdString(gpu_display_name(gpu)));
    // A long GPU name wraps the title instead of cutting it.
    layout.title_rect = QRectF(kMargin, kMargin, inner, std::max(22.0, wrapped_height(title_font(), inner, layout.title)));
    double y = layout.title_rect.bottom() + 14;
    const auto add_row = [&](Row::Kind kind, const QString& text) {
        const bool swatch = kind == Row::Kind::shared || kind == Row::Kind::grce || kind == Row::Kind::undriven;
        const double text_width = inner - (swatch ? kSwatchWidth + 10 : 0);
        const QFont row_font = kind == Row::Kind::source ? detail_font() : legend_font();
        const double height = std::max(swatch ? 18.0 : 0.0, wrapped_height(row_font, text_width, text));
        layout.legend.push_back({kind, QRectF(kMargin, y, inner, height), text});
        y += height + 6;
    };

    if (lces.empty()) {
        layout.unavailable = QStringLiteral("No LCE → PCE wiring for this GPU: %1").arg(fact_text(gpu.copy_engines.pce_count));
        y += wrapped_height(font(13), inner, layout.unavailable) + 12;
        add_row(Row::Kind::source, QStringLiteral("source: ") + provenance_text(gpu.copy_engines.pce_count.from));
        layout.size = QSizeF(width, std::ceil(y - 6 + kMargin));  // whole pixels: exported images are exactly 2x
        return layout;
    }

    layout.lce_heading = QRectF(kMargin, y, kLceWidth, 16);
    layout.pce_heading = QRectF(pce_x, y, kPceWidth, 16);
    y += 24;
    const double pce_span = pces * (kPceHeight + kPceGap) - kPceGap;
    const double lce_span = lce_total * (kLceHeight + kLceGap) - kLceGap;
    const double span = std::max(pce_span, lce_span);

    // Who drives each PCE, in LCE order.
    std::vector<std::vector<const LogicalCopyEngine*>> drivers(static_cast<std::size_t>(pces));
    for (const LogicalCopyEngine& lce : lces)
        for (const int bit : bits_of(lce.pce_mask)) drivers[static_cast<std::size_t>(bit)].push_back(&lce);

    // LCEs spread evenly along the PCEs (down their column, or across their row), so their fans of edges stay apart.
    const double lce_pitch = (rows ? row_span : span) / lce_total;
    for (int i = 0; i < lce_total; ++i) {
        const LogicalCopyEngine& lce = lces[static_cast<std::size_t>(i)];
        CopyEngineBox box;
        box.kind = CopyEngineBox::Kind::lce;
        box.index = lce.index;
        box.rect = rows ? QRectF(kMargin + (i + 0.5) * lce_pitch - kLceWidth / 2, y, kLceWidth, kLceHeight)
                        : QRectF(kMargin, y + (i + 0.5) * lce_pitch - kLceHeight / 2, kLceWidth, kLceHeight);
        box.label = QStringLiteral("LCE%1").arg(lce.index);
        const auto bits = bits_of(lce.pce_mask);
        box.detail = bits.empty() ? QStringLiteral("no PCE") : QStringLiteral("→ PCE %1").arg(QString::fromStdString(pce_list(lce.pce_mask)));
        box.tooltip = lce_tooltip(gpu, lce);
        box.color = lce_color(lce.index);
        box.grce = lce.grce;
        layout.boxes.push_back(box);
    }
    const double pce_top = y + (span - pce_span) / 2;
    const double pce_row_y = y + kLceHeight + kWireHeight;
    const double pce_row_left = kMargin + (row_span - pce_row) / 2;
    bool any_undriven = false;
    for (int p = 0; p < pces; ++p) {
        const auto& by = drivers[static_cast<std::size_t>(p)];
        CopyEngineBox box;
        box.kind = CopyEngineBox::Kind::pce;
        box.index = p;
        box.rect = rows ? QRectF(pce_row_left + p * (kRowPceWidth + kPceGap), pce_row_y, kRowPceWidth, kRowPceHeight)
                        : QRectF(pce_x, pce_top + p * (kPceHeight + kPceGap), kPceWidth, kPceHeight);
        box.label = QStringLiteral("PCE%1").arg(p);
        std::vector<int> indices;
        for (const LogicalCopyEngine* lce : by) indices.push_back(lce->index);
        box.detail = by.empty() ? QStringLiteral("no LCE") : QStringLiteral("LCE %1").arg(joined(indices));
        box.tooltip = pce_tooltip(gpu, p, by);
        box.shared = by.size() > 1;
        box.driven = !by.empty();
        any_undriven = any_undriven || by.empty();
        layout.boxes.push_back(box);
    }

    // Edges leave an LCE at points spread along its side facing the PCEs, and arrive at a PCE the same way, so
    // a shared PCE shows one arrowhead per LCE instead of a single blob.
    std::map<int, int> arrived;  // pce -> edges placed so far
    for (int i = 0; i < lce_total; ++i) {
        const auto bits = bits_of(lces[static_cast<std::size_t>(i)].pce_mask);
        const QRectF from = layout.boxes[static_cast<std::size_t>(i)].rect;
        const auto outgoing = static_cast<double>(bits.size());
        const double out_room = rows ? kLceWidth - 20 : kLceHeight - 14;
        const double out_step = outgoing > 1 ? std::min(rows ? 10.0 : 6.0, out_room / (outgoing - 1)) : 0;
        for (std::size_t k = 0; k < bits.size(); ++k) {
            const int pce_box = lce_total + bits[k];
            const QRectF to = layout.boxes[static_cast<std::size_t>(pce_box)].rect;
            const auto incoming = static_cast<double>(drivers[static_cast<std::size_t>(bits[k])].size());
            const double in_room = rows ? kRowPceWidth - 16 : kPceHeight - 10;
            const double in_step = incoming > 1 ? std::min(8.0, in_room / (incoming - 1)) : 0;
            const int slot = arrived[bits[k]]++;
            const double out = (static_cast<double>(k) - (outgoing - 1) / 2) * out_step;
            const double in = (slot - (incoming - 1) / 2.0) * in_step;
            layout.edges.push_back({i, pce_box,
                                    rows ? QPointF(from.center().x() + out, from.bottom()) : QPointF(from.right(), from.center().y() + out),
                                    rows ? QPointF(to.center().x() + in, to.top()) : QPointF(to.left(), to.center().y() + in)});
        }
    }

    if (rows) {  // the PCE heading under its row, the legend below that
        layout.pce_heading = QRectF(kMargin, pce_row_y + kRowPceHeight + 6, kPceWidth, 16);
        y = layout.pce_heading.bottom() + 16;
    } else {
        y += span + 22;
    }
    const bool any_shared = std::any_of(layout.boxes.begin(), layout.boxes.end(), [](const auto& b) { return b.shared; });
    if (any_shared)
        add_row(Row::Kind::shared, QStringLiteral("shared physical copy engine (Bakita & Anderson, RTAS 2024, rule R8): driven by more than one LCE, "
                                                  "so copies on those LCEs compete for it"));
    if (std::any_of(lces.begin(), lces.end(), [](const auto& l) { return l.grce; }))
        add_row(Row::Kind::grce, QStringLiteral("graphics copy engine: an LCE with the GRCE capability"));
    if (any_undriven) add_row(Row::Kind::undriven, QStringLiteral("PCE that no LCE drives"));
    for (const std::string& line : shared_copy_engine_lines(gpu)) add_row(Row::Kind::finding, QStringLiteral("⚠ ") + QString::fromStdString(line));
    add_row(Row::Kind::source, QStringLiteral("source: ") + provenance_text(lces.front().from));
    layout.size = QSizeF(width, std::ceil(y - 6 + kMargin));  // whole pixels: exported images are exactly 2x
    return layout;
}

QTransform copy_engine_transform(QSizeF picture, const QRectF& target) {
    if (picture.isEmpty() || target.isEmpty()) return {};
    const double scale = std::min(target.width() / picture.width(), target.height() / picture.height());
    const double dx = target.x() + (target.width() - picture.width() * scale) / 2;
    const double dy = target.y() + (target.height() - picture.height() * scale) / 2;
    return QTransform::fromTranslate(dx, dy).scale(scale, scale);
}

QSizeF copy_engine_picture_size(const Gpu& gpu) { return layout_copy_engines(gpu).size; }

}  // namespace gpupart::widgets
