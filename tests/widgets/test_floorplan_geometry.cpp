// The floorplan's geometry without a window: what is drawn is what is hit.
#include <QtTest>

#include "floorplan_geometry.hpp"
#include "model/gpu_queries.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

// The built-in H200 as a source without the driver's floorplan leaves it: the TPCs of descriptor bits 75, 78,
// 81, 83 (TPCs 62-65) of no GPC; and, as a source that placed the holes, hole bit 4 in gpc0's empty slot 6.
// Tiles are keyed by TPC number; a hole, which has no number, by hole_key(its descriptor bit).
Gpu partly_known(const Gpu& h200) {
    Gpu gpu = h200;
    for (Tpc& tpc : gpu.tpcs)
        if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
    for (Hole& hole : gpu.holes)
        if (hole.mask_bit == 4) hole.gpc = 0, hole.slot = 6;
    return gpu;
}

class FloorplanGeometryTest : public QObject {
    Q_OBJECT
    Snapshot snapshot_ = load_snapshot("builtin:h200");
    const Gpu& gpu() const { return snapshot_.gpus.at(0); }

private slots:
    void h200HasOneTilePerTpcAndHolesOnlyWhereSlotsAre() {
        const Gpu partly = partly_known(gpu());
        for (const Gpu* shown : {&gpu(), &partly}) {
            const auto geometry = FloorplanGeometry::layout(*shown, 5);
            int tpcs = 0;
            int holes = 0;
            for (const FloorplanTile& tile : geometry.tiles()) (tile.hole ? holes : tpcs)++;
            QCOMPARE(tpcs, 66);
            int placed_holes = 0;
            for (const Hole& hole : shown->holes) placed_holes += hole.gpc && hole.slot ? 1 : 0;
            QCOMPARE(holes, placed_holes);
            // No TPC tile on a hole, and no two tiles overlap.
            for (const FloorplanTile& a : geometry.tiles())
                for (const FloorplanTile& b : geometry.tiles())
                    if (&a != &b) QVERIFY2(!a.rect.intersects(b.rect), qPrintable(QString("tiles %1 and %2 overlap").arg(a.tpc_key).arg(b.tpc_key)));
            for (const FloorplanTile& tile : geometry.tiles()) {
                QCOMPARE(find_tpc(*shown, tile.tpc_key) != nullptr, !tile.hole);
                QVERIFY(QRectF(QPointF(0, 0), geometry.size()).contains(tile.rect));
            }
        }
        // The driver's floorplan places every TPC and no hole: 8 GPC boxes, no tile that is a hole.
        QCOMPARE(FloorplanGeometry::layout(gpu(), 5).boxes().size(), std::size_t{8});
        QVERIFY(!FloorplanGeometry::layout(gpu(), 5).tile_for_key(hole_key(4)));
        // Without it: the 8 GPCs and the box of the 4 TPCs of undetermined GPC; the placed hole has its tile.
        const auto geometry = FloorplanGeometry::layout(partly, 5);
        QCOMPARE(geometry.boxes().size(), std::size_t{9});
        QVERIFY(!geometry.boxes().back().gpc);
        QCOMPARE(geometry.tpcs_of_box(geometry.boxes().back()).to_list(), std::string("62-65"));
        QVERIFY(geometry.tile_for_key(hole_key(4)) != nullptr && geometry.tile_for_key(hole_key(4))->hole);
    }

    void hitTestingFindsTpcsNeverHoles() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 5);
        QCOMPARE(geometry.tpc_at(geometry.tile_for_key(25)->rect.center()), std::optional<int>(25));  // bit 12
        QCOMPARE(geometry.tpc_at(geometry.tile_for_key(62)->rect.center()), std::optional<int>(62));  // bit 75
        // gpc0's slots (3 a row) as TPC numbers: 0 24 64 / 8 62 65 / . 16 63 (descriptor bits 0 3 81 / 1 75 83 /
        // . 2 78). Its empty slot 6 lies under slot 3 (TPC 8) as slot 3 lies under slot 0 (TPC 0): nothing is hit there.
        const QPointF slot0 = geometry.tile_for_key(0)->rect.center();
        const QPointF slot3 = geometry.tile_for_key(8)->rect.center();
        QVERIFY(!geometry.tpc_at(slot3 + (slot3 - slot0)));
        QVERIFY(!geometry.tpc_at(QPointF(-5, -5)));
        const FloorplanGpcBox* header = geometry.header_at(geometry.boxes().at(2).header.center());
        QVERIFY(header != nullptr);
        QCOMPARE(geometry.tpcs_of_box(*header), gpc_tpcs(gpu(), 2));
        const QRectF band = geometry.tile_for_key(0)->rect.united(geometry.tile_for_key(64)->rect);  // one row of GPC 0
        QCOMPARE(QString::fromStdString(geometry.tpcs_in(band).to_list()), QString("0,24,64"));
        const QRectF column = geometry.tile_for_key(0)->rect.united(geometry.tile_for_key(8)->rect);
        QCOMPARE(QString::fromStdString(geometry.tpcs_in(column).to_list()), QString("0,8"));  // slot 3 sits under slot 0
        // A hole a source placed in a slot has a tile, and is never hit.
        const auto placed = FloorplanGeometry::layout(partly_known(gpu()), 5);
        QCOMPARE(placed.tile_for_key(hole_key(4))->rect.center(), slot3 + (slot3 - slot0));
        QVERIFY(!placed.tpc_at(placed.tile_for_key(hole_key(4))->rect.center()));
        QCOMPARE(placed.tpc_at(placed.tile_for_key(62)->rect.center()), std::optional<int>(62));  // in the box of no GPC
    }

    void arrowsWalkTheGridAcrossBoxes() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 5);
        QCOMPARE(geometry.first_tpc(), std::optional<int>(0));
        QCOMPARE(geometry.neighbour(0, Direction::right), std::optional<int>(24));   // slot 1 holds TPC 24 (bit 3)
        QCOMPARE(geometry.neighbour(0, Direction::down), std::optional<int>(8));     // slot 3 (TPC 8, bit 1) is under slot 0
        QCOMPARE(geometry.neighbour(64, Direction::right), std::optional<int>(1));   // from slot 2 into GPC 1's box (TPC 1, bit 9)
        QCOMPARE(geometry.neighbour(8, Direction::down), std::optional<int>(4));     // past the empty slot 6, into GPC 4's box (TPC 4, bit 36)
        QVERIFY(!geometry.neighbour(0, Direction::left));
        QVERIFY(!geometry.neighbour(0, Direction::up));
    }

    void legendEntriesAreHitTested() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 7);
        for (int i = 0; i < 7; ++i) QCOMPARE(geometry.legend_entry_at(geometry.legend_entry(i).center()), std::optional<int>(i));
        QVERIFY(QRectF(QPointF(0, 0), geometry.size()).contains(geometry.legend_entry(6)));
    }

    void gpusWithoutTpcMapHaveNoTiles() {
        const Snapshot gtx = load_snapshot("builtin:gtx1060");
        const auto geometry = FloorplanGeometry::layout(gtx.gpus.at(0), 3);
        QVERIFY(geometry.tiles().empty() == gtx.gpus.at(0).tpcs.empty());
    }
};

QTEST_GUILESS_MAIN(FloorplanGeometryTest)
#include "test_floorplan_geometry.moc"
