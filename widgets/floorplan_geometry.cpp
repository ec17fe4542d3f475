#include "floorplan_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include "model/tpc_numbering.hpp"

namespace gpupart::widgets {
namespace {

// Four GPC boxes a row: wide windows and landscape exports show a whole Hopper (8 GPCs) in two rows.
constexpr int kBoxesPerRow = 4;

int slot_columns(int slot_count) { return std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(slot_count))))); }

}  // namespace

FloorplanGeometry FloorplanGeometry::layout(const Gpu& gpu, int legend_entries, int owner_chips) {
    FloorplanGeometry geometry;
    // Slots per box: a GPC's tpc_slots; the undetermined box holds its TPCs one per slot.
    struct BoxPlan {
        std::optional<int> gpc;
        int slot_count = 0;
    };
    std::vector<BoxPlan> plans;
    for (const Gpc& gpc : gpu.gpcs) plans.push_back({gpc.index, gpc.tpc_slots});
    std::vector<int> undetermined;  // indices into gpu.tpcs
    for (std::size_t i = 0; i < gpu.tpcs.size(); ++i)
        if (!gpu.tpcs[i].gpc || !gpu.tpcs[i].slot) undetermined.push_back(static_cast<int>(i));
    // A TPC whose number is not known gets a negative key, unique and below every number, so it sorts first
    // and is drawn (its GPC slot is known) but never selected.
    auto key_of = [&](int index) {
        const std::optional<int> number = tpc_number(gpu.tpcs[static_cast<std::size_t>(index)]);
        return number ? *number : -1 - index;
    };
    if (!undetermined.empty()) plans.push_back({std::nullopt, static_cast<int>(undetermined.size())});

    // Every box has the same width (the widest slot grid), so the columns line up.
    int columns = 1;
    int rows_max = 1;
    for (const BoxPlan& plan : plans) columns = std::max(columns, slot_columns(plan.slot_count));
    for (const BoxPlan& plan : plans) rows_max = std::max(rows_max, (plan.slot_count + columns - 1) / columns);
    const double box_width = 2 * kPadding + columns * kTileWidth + (columns - 1) * kGap;
    const double box_height = kHeaderHeight + 2 * kPadding + rows_max * kTileHeight + (rows_max - 1) * kGap;

    const int per_row = std::max(1, std::min(kBoxesPerRow, static_cast<int>(plans.size())));
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const int column = static_cast<int>(i) % per_row;
        const int row = static_cast<int>(i) / per_row;
        const QRectF box(kGap + column * (box_width + kGap), kGap + row * (box_height + kGap), box_width, box_height);
        geometry.boxes_.push_back({plans[i].gpc, box, QRectF(box.left(), box.top(), box.width(), kHeaderHeight)});
        auto slot_rect = [&](int slot) {
            const int r = slot / columns;
            const int c = slot % columns;
            return QRectF(box.left() + kPadding + c * (kTileWidth + kGap),
                          box.top() + kHeaderHeight + kPadding + r * (kTileHeight + kGap), kTileWidth, kTileHeight);
        };
        if (plans[i].gpc) {
            const int gpc = *plans[i].gpc;
            for (std::size_t t = 0; t < gpu.tpcs.size(); ++t) {
                const Tpc& tpc = gpu.tpcs[t];
                if (tpc.gpc == gpc && tpc.slot)
                    geometry.tiles_.push_back({key_of(static_cast<int>(t)), false, gpc, slot_rect(*tpc.slot), static_cast<int>(t)});
            }
            for (const Hole& hole : gpu.holes)
                if (hole.gpc == gpc && hole.slot) geometry.tiles_.push_back({hole_key(hole.mask_bit), true, gpc, slot_rect(*hole.slot), -1});
        } else {
            for (std::size_t k = 0; k < undetermined.size(); ++k)
                geometry.tiles_.push_back({key_of(undetermined[k]), false, std::nullopt, slot_rect(static_cast<int>(k)), undetermined[k]});
        }
    }
    std::sort(geometry.tiles_.begin(), geometry.tiles_.end(),
              [](const FloorplanTile& a, const FloorplanTile& b) { return a.tpc_key < b.tpc_key; });

    const int box_rows = plans.empty() ? 0 : (static_cast<int>(plans.size()) + per_row - 1) / per_row;
    const double plan_width = std::max(kGap + per_row * (box_width + kGap), kLegendEntryWidth + 2 * kGap);
    const double legend_top = kGap + box_rows * (box_height + kGap);
    geometry.legend_entries_ = std::max(0, legend_entries);
    geometry.owner_chips_ = std::clamp(owner_chips, 0, geometry.legend_entries_);
    geometry.chip_columns_ = std::max(1, static_cast<int>((plan_width - kGap) / (kLegendChipWidth + kGap)));
    geometry.chip_rows_ = (geometry.owner_chips_ + geometry.chip_columns_ - 1) / geometry.chip_columns_;
    geometry.chip_width_ = (plan_width - kGap) / geometry.chip_columns_ - kGap;
    geometry.legend_columns_ = std::max(1, static_cast<int>((plan_width - kGap) / (kLegendEntryWidth + kGap)));
    const int key_entries = geometry.legend_entries_ - geometry.owner_chips_;
    const int legend_rows = geometry.chip_rows_ + (key_entries + geometry.legend_columns_ - 1) / geometry.legend_columns_;
    geometry.legend_ = QRectF(kGap, legend_top, plan_width - 2 * kGap, legend_rows * kLegendRowHeight);
    geometry.size_ = QSizeF(plan_width, legend_top + legend_rows * kLegendRowHeight + kGap);
    return geometry;
}

const FloorplanTile* FloorplanGeometry::tile_for_key(int tpc_key) const {
    const auto it = std::lower_bound(tiles_.begin(), tiles_.end(), tpc_key,
                                     [](const FloorplanTile& tile, int bit) { return tile.tpc_key < bit; });
    return it != tiles_.end() && it->tpc_key == tpc_key ? &*it : nullptr;
}

std::optional<int> FloorplanGeometry::tpc_at(QPointF point) const {
    for (const FloorplanTile& tile : tiles_)
        if (tile.selectable() && tile.rect.contains(point)) return tile.tpc_key;
    return std::nullopt;
}

const FloorplanGpcBox* FloorplanGeometry::header_at(QPointF point) const {
    for (const FloorplanGpcBox& box : boxes_)
        if (box.header.contains(point)) return &box;
    return nullptr;
}

TpcMask FloorplanGeometry::tpcs_in(const QRectF& area) const {
    TpcMask mask;
    const QRectF normalized = area.normalized();
    for (const FloorplanTile& tile : tiles_)
        if (tile.selectable() && tile.rect.intersects(normalized)) mask.set(tile.tpc_key);
    return mask;
}

TpcMask FloorplanGeometry::tpcs_of_box(const FloorplanGpcBox& box) const {
    TpcMask mask;
    for (const FloorplanTile& tile : tiles_)
        if (tile.selectable() && tile.gpc == box.gpc && box.box.contains(tile.rect.center())) mask.set(tile.tpc_key);
    return mask;
}

QRectF FloorplanGeometry::legend_entry(int index) const {
    if (index < owner_chips_) {
        const int column = index % chip_columns_;
        const int row = index / chip_columns_;
        return QRectF(legend_.left() + column * (chip_width_ + kGap), legend_.top() + row * kLegendRowHeight,
                      chip_width_, kLegendRowHeight);
    }
    const int key = index - owner_chips_;
    const int column = key % legend_columns_;
    const int row = chip_rows_ + key / legend_columns_;
    return QRectF(legend_.left() + column * (kLegendEntryWidth + kGap), legend_.top() + row * kLegendRowHeight,
                  kLegendEntryWidth, kLegendRowHeight);
}

std::optional<int> FloorplanGeometry::legend_entry_at(QPointF point) const {
    for (int i = 0; i < legend_entries_; ++i)
        if (legend_entry(i).contains(point)) return i;
    return std::nullopt;
}

std::optional<int> FloorplanGeometry::neighbour(int tpc_key, Direction direction) const {
    const FloorplanTile* from = tile_for_key(tpc_key);
    if (from == nullptr) return first_tpc();
    const QPointF origin = from->rect.center();
    std::optional<int> best;
    double best_score = std::numeric_limits<double>::max();
    for (const FloorplanTile& tile : tiles_) {
        if (!tile.selectable() || tile.tpc_key == tpc_key) continue;
        const QPointF d = tile.rect.center() - origin;
        // Along: distance in the direction asked; across: sideways drift, weighted so that the tile
        // straight ahead wins over a nearer one diagonally off.
        double along = 0;
        double across = 0;
        switch (direction) {
        case Direction::left: along = -d.x(); across = d.y(); break;
        case Direction::right: along = d.x(); across = d.y(); break;
        case Direction::up: along = -d.y(); across = d.x(); break;
        case Direction::down: along = d.y(); across = d.x(); break;
        }
        if (along <= 1) continue;
        const double score = along + 3 * std::abs(across);
        if (score < best_score) {
            best_score = score;
            best = tile.tpc_key;
        }
    }
    return best;
}

std::optional<int> FloorplanGeometry::first_tpc() const {
    for (const FloorplanTile& tile : tiles_)
        if (tile.selectable()) return tile.tpc_key;
    return std::nullopt;
}

}  // namespace gpupart::widgets
