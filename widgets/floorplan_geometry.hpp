#pragma once
// Where everything of the floorplan sits, in picture units (one unit = one pixel at zoom 1), apart
// from any widget: GPC boxes with their headers, one tile per TPC slot (real TPCs and floorswept
// holes), a box for TPCs whose GPC no source could determine, and the legend. The view, the PNG/SVG
// export and the tests all use this one class, so what is hit is exactly what is drawn.
#include <optional>
#include <vector>

#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include "model/gpu.hpp"

namespace gpupart::widgets {

// A tile's key: the TPC's number (TPC k = SMs 2k and 2k+1); -1 - its index in Gpu::tpcs for a TPC whose
// number is not known; hole_key(bit) for a floorswept slot (no TPC, so no number: keyed by its descriptor bit).
constexpr int kHoleKeyBase = -100000;
constexpr int hole_key(int descriptor_bit) { return kHoleKeyBase - descriptor_bit; }
constexpr bool is_hole_key(int key) { return key <= kHoleKeyBase; }

struct FloorplanTile {
    int tpc_key = 0;
    bool hole = false;           // a floorswept slot: drawn empty, never selectable
    std::optional<int> gpc;      // empty: the "GPC not determined" box
    QRectF rect;
    int tpc_index = -1;          // index into Gpu::tpcs for a TPC tile

    bool selectable() const { return !hole && tpc_key >= 0; }  // a TPC a mask can name
};

struct FloorplanGpcBox {
    std::optional<int> gpc;      // empty: the box of TPCs whose GPC is not determined
    QRectF box;
    QRectF header;               // clicking it selects the GPC's TPCs
};

enum class Direction { left, right, up, down };

class FloorplanGeometry {
public:
    static constexpr double kTileWidth = 76;
    static constexpr double kTileHeight = 50;
    static constexpr double kGap = 6;
    static constexpr double kPadding = 10;
    static constexpr double kHeaderHeight = 24;
    static constexpr double kLegendRowHeight = 22;
    static constexpr double kLegendEntryWidth = 250;
    static constexpr double kLegendChipWidth = 132;  // an owner's chip: its letter, pid and program

    // `legend_entries`: how many legend entries to leave room for (owners plus the fixed ones); the first
    // `owner_chips` of them are owners, laid out as narrow chips so that 40 processes take a few rows.
    static FloorplanGeometry layout(const Gpu& gpu, int legend_entries, int owner_chips = 0);

    QSizeF size() const { return size_; }
    const std::vector<FloorplanGpcBox>& boxes() const { return boxes_; }
    const std::vector<FloorplanTile>& tiles() const { return tiles_; }

    const FloorplanTile* tile_for_key(int tpc_key) const;  // real TPC or placed hole
    std::optional<int> tpc_at(QPointF point) const;          // TPC number of the real TPC under point
    const FloorplanGpcBox* header_at(QPointF point) const;
    TpcMask tpcs_in(const QRectF& area) const;               // real TPCs whose tile intersects area
    TpcMask tpcs_of_box(const FloorplanGpcBox& box) const;

    QRectF legend_entry(int index) const;                    // entry index in [0, legend_entries)
    std::optional<int> legend_entry_at(QPointF point) const;
    int legend_entries() const { return legend_entries_; }

    // The real TPC next to `tpc_key` in a direction (nearest tile centre in that half-plane, so moving
    // across GPC boxes works); nullopt at the edge.
    std::optional<int> neighbour(int tpc_key, Direction direction) const;
    std::optional<int> first_tpc() const;

private:
    std::vector<FloorplanGpcBox> boxes_;
    std::vector<FloorplanTile> tiles_;
    QRectF legend_;
    int legend_entries_ = 0;
    int legend_columns_ = 1;
    int owner_chips_ = 0;
    int chip_columns_ = 1;
    double chip_width_ = kLegendChipWidth;  // stretched so that the chips fill their rows
    int chip_rows_ = 0;
    QSizeF size_;
};

}  // namespace gpupart::widgets
