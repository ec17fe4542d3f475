// The floorplan's zoom on the recorded H200: fitted by default and following the view's size, zoom in/out
// by keys and Ctrl+wheel (at the pointer), scroll bars only while the picture is larger than the view, and
// Ctrl+0 back to fitting. Offscreen, with screenshots of a fitted and a zoomed view.
#include <QScrollBar>
#include <QTest>
#include <QWheelEvent>

#include "floorplan_view.hpp"
#include "floorplan_viewport.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

// The area the picture may use (the view less its banner) is filled along one direction, to a pixel.
bool fills_one_direction(const FloorplanView& view) {
    const QSizeF scaled = view.geometry().size() * view.zoom();
    const QRectF area = view.viewport().area();
    return std::abs(scaled.width() - area.width()) < 1 || std::abs(scaled.height() - area.height()) < 1;
}

void wheel(FloorplanView& view, QPointF at, int notches, Qt::KeyboardModifiers modifiers) {
    QWheelEvent event(at, view.mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, modifiers,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &event);
}

QScrollBar* bar(FloorplanView& view, Qt::Orientation orientation) {
    for (QScrollBar* b : view.findChildren<QScrollBar*>())
        if (b->orientation() == orientation) return b;
    return nullptr;
}

}  // namespace

class TestFloorplanZoom : public QObject {
    Q_OBJECT
    Gpu gpu_ = load_snapshot("builtin:h200").gpus.at(0);

private slots:
    void fitsTheViewAndFollowsItsSize() {
        FloorplanView view;
        view.setGpu(gpu_, "H200");
        view.resize(700, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.fitsView());
        const double small = view.zoom();
        QVERIFY(fills_one_direction(view));
        view.resize(1800, 1100);  // the window maximised, or the dock beside it closed
        QCoreApplication::processEvents();
        QVERIFY(view.fitsView());
        QVERIFY2(view.zoom() > small * 2, qPrintable(QString("%1 -> %2").arg(small).arg(view.zoom())));
        QVERIFY(fills_one_direction(view));
        // Every tile is inside the view, below the banner, and no scroll bar shows.
        for (const FloorplanTile& tile : view.geometry().tiles())
            if (tile.selectable()) QVERIFY(QRectF(0, FloorplanView::kBannerHeight, 1800, 1100 - FloorplanView::kBannerHeight).contains(view.tileRectInWidget(tile.tpc_key)));
        QVERIFY(!bar(view, Qt::Horizontal)->isVisible());
        QVERIFY(!bar(view, Qt::Vertical)->isVisible());
        QVERIFY(gpupart::test::save_screenshot(view, "floorplan_fit_large", {1800, 1100}));
    }

    void keysZoomAndCtrl0FitsAgain() {
        FloorplanView view;
        view.setGpu(gpu_, "H200");
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const double fit = view.zoom();
        QTest::keyClick(&view, Qt::Key_Plus, Qt::ControlModifier);
        QVERIFY(!view.fitsView());
        QCOMPARE(view.zoom(), fit * FloorplanViewport::kStep);
        QTest::keyClick(&view, Qt::Key_Equal, Qt::ControlModifier);  // Ctrl+= as well: no shift needed
        QTest::keyClick(&view, Qt::Key_Plus, Qt::ControlModifier);
        QCOMPARE(view.zoom(), fit * std::pow(FloorplanViewport::kStep, 3));
        // Larger than the view now: scroll bars, and the wheel scrolls.
        QVERIFY(bar(view, Qt::Vertical)->isVisible());
        QVERIFY(bar(view, Qt::Horizontal)->isVisible());
        const QRectF before = view.tileRectInWidget(36);
        wheel(view, QPointF(400, 300), -1, Qt::NoModifier);
        QVERIFY(bar(view, Qt::Vertical)->value() > 0);
        QVERIFY(view.tileRectInWidget(36).top() < before.top());
        QVERIFY(gpupart::test::save_screenshot(view, "floorplan_zoomed", {900, 500}));
        // A zoom stays put when the view is resized...
        const double zoomed = view.zoom();
        view.resize(1200, 700);
        QCoreApplication::processEvents();
        QCOMPARE(view.zoom(), zoomed);
        // ...until Ctrl+0 fits it to the view again, bars gone.
        QTest::keyClick(&view, Qt::Key_0, Qt::ControlModifier);
        QVERIFY(view.fitsView());
        QVERIFY(fills_one_direction(view));
        QVERIFY(!bar(view, Qt::Vertical)->isVisible());
        QTest::keyClick(&view, Qt::Key_Minus, Qt::ControlModifier);
        QCOMPARE(view.zoom(), view.viewport().fitScale() / FloorplanViewport::kStep);
    }

    void ctrlWheelZoomsAtThePointer() {
        FloorplanView view;
        view.setGpu(gpu_, "H200");
        view.resize(1000, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QPointF pointer = view.tileRectInWidget(57).center();
        const double fit = view.zoom();
        wheel(view, pointer, 2, Qt::ControlModifier);
        QCOMPARE(view.zoom(), fit * FloorplanViewport::kStep * FloorplanViewport::kStep);
        // The TPC under the pointer is still under it (an image viewer's zoom, not a jump to a corner).
        QCOMPARE(view.geometry().tpc_at(view.toPicture(pointer)), std::optional<int>(57));
        QVERIFY(view.tileRectInWidget(57).contains(pointer));
        wheel(view, pointer, -2, Qt::ControlModifier);
        QVERIFY(std::abs(view.zoom() - fit) < 1e-9);
    }

    void viewportCentresASmallPictureAndClampsScroll() {
        FloorplanViewport viewport;
        viewport.setPicture({1000, 500});
        viewport.setArea({0, 26, 1000, 1000});  // square area, wide picture: fitted by width, centred vertically
        QCOMPARE(viewport.fitScale(), 1.0);
        QCOMPARE(viewport.offset(), QPointF(0, 26 + 250));
        viewport.setArea({0, 26, 100000, 100000});  // huge: the fit stops at kMaxFitScale
        QCOMPARE(viewport.fitScale(), FloorplanViewport::kMaxFitScale);
        viewport.setArea({0, 26, 500, 250});
        viewport.zoomTo(2);
        QCOMPARE(viewport.scrollRange(), QSizeF(1500, 750));
        viewport.setScroll({5000, -3});
        QCOMPARE(viewport.scroll(), QPointF(1500, 0));
        viewport.zoomTo(100);
        QCOMPARE(viewport.scale(), FloorplanViewport::kMaxScale);
        viewport.fit();
        QVERIFY(viewport.fits());
        QCOMPARE(viewport.scroll(), QPointF(0, 0));
    }
};

QTEST_MAIN(TestFloorplanZoom)
#include "test_floorplan_zoom.moc"
