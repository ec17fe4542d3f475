// The floorplan's geometry without a window: what is drawn is what is hit.
#include <QtTest>

#include "floorplan_geometry.hpp"
#include "model/gpu_queries.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

class FloorplanGeometryTest : public QObject {
    Q_OBJECT
    Snapshot snapshot_ = load_snapshot("builtin:h200");
    const Gpu& gpu() const { return snapshot_.gpus.at(0); }

private slots:
    void h200HasOneTilePerTpcAndHolesOnlyWhereSlotsAre() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 5);
        int tpcs = 0;
        int holes = 0;
        for (const FloorplanTile& tile : geometry.tiles()) (tile.hole ? holes : tpcs)++;
        QCOMPARE(tpcs, 66);
        int placed_holes = 0;
        for (const Hole& hole : gpu().holes) placed_holes += hole.gpc && hole.slot ? 1 : 0;
        QCOMPARE(holes, placed_holes);
        QCOMPARE(geometry.boxes().size(), std::size_t{9});  // 8 GPCs and the box of the 4 undetermined TPCs
        // No TPC tile on a hole, and no two tiles overlap.
        for (const FloorplanTile& a : geometry.tiles())
            for (const FloorplanTile& b : geometry.tiles())
                if (&a != &b) QVERIFY2(!a.rect.intersects(b.rect), qPrintable(QString("bits %1 and %2 overlap").arg(a.mask_bit).arg(b.mask_bit)));
        for (const FloorplanTile& tile : geometry.tiles()) {
            QCOMPARE(find_tpc(gpu(), tile.mask_bit) != nullptr, !tile.hole);
            QVERIFY(QRectF(QPointF(0, 0), geometry.size()).contains(tile.rect));
        }
    }

    void hitTestingFindsTpcsNeverHoles() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 5);
        QCOMPARE(geometry.tpc_at(geometry.tile_for_bit(12)->rect.center()), std::optional<int>(12));
        QCOMPARE(geometry.tpc_at(geometry.tile_for_bit(75)->rect.center()), std::optional<int>(75));
        QVERIFY(!geometry.tpc_at(geometry.tile_for_bit(4)->rect.center()));  // bit 4 is a hole
        QVERIFY(!geometry.tpc_at(QPointF(-5, -5)));
        const FloorplanGpcBox* header = geometry.header_at(geometry.boxes().at(2).header.center());
        QVERIFY(header != nullptr);
        QCOMPARE(geometry.tpcs_of_box(*header), gpc_tpcs(gpu(), 2));
        const QRectF band = geometry.tile_for_bit(0)->rect.united(geometry.tile_for_bit(2)->rect);  // one row of GPC 0
        QCOMPARE(QString::fromStdString(geometry.tpcs_in(band).to_list()), QString("0-2"));
        const QRectF column = geometry.tile_for_bit(0)->rect.united(geometry.tile_for_bit(3)->rect);
        QCOMPARE(QString::fromStdString(geometry.tpcs_in(column).to_list()), QString("0,3"));  // slot 3 sits under slot 0
    }

    void arrowsWalkTheGridAcrossBoxes() {
        const auto geometry = FloorplanGeometry::layout(gpu(), 5);
        QCOMPARE(geometry.first_tpc(), std::optional<int>(0));
        QCOMPARE(geometry.neighbour(0, Direction::right), std::optional<int>(1));
        QCOMPARE(geometry.neighbour(0, Direction::down), std::optional<int>(3));     // slot 3 is under slot 0
        QCOMPARE(geometry.neighbour(2, Direction::right), std::optional<int>(9));    // into GPC 1's box
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
