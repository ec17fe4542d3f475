// File > Export of the floorplan is a picture of the GPU and its owners: the operator's live state (the
// selected TPCs, the keyboard's tile cursor, the legend entry a drag hovers) stays out of it, in PNG and SVG.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "floorplan_painter.hpp"
#include "floorplan_scene.hpp"
#include "owner_colors.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

class FloorplanExportTest : public QObject {
    Q_OBJECT
    Gpu h200_ = load_snapshot("builtin:h200").gpus.at(0);
    QTemporaryDir dir_;

    FloorplanScene scene() const {
        FloorplanScene scene;
        scene.gpu = &h200_;
        scene.title = "NVIDIA H200 — recording";
        TpcMask a, b;
        for (const int tpc : {0, 8, 16, 24}) a.set(tpc);
        for (const int tpc : {1, 9, 17, 25}) b.set(tpc);
        scene.owners = {{101, 1, "101 llm-serving", owner_palette_color(0), a, 'A'},
                        {202, 1, "202 vision", owner_palette_color(1), b, 'B'}};
        return scene;
    }

    FloorplanScene live() const {  // what the window had when File > Export was chosen
        FloorplanScene scene = this->scene();
        for (const int tpc : {0, 1, 2, 3, 8}) scene.selection.set(tpc);
        scene.focus = 8;
        scene.highlighted_legend = 1;
        return scene;
    }

    QByteArray read(const QString& name) const {
        QFile file(dir_.filePath(name));
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }

private slots:
    void pngHasNoSelectionFocusOrDropHint() {
        export_floorplan_png(live(), dir_.filePath("live.png"), 1.0);
        export_floorplan_png(scene(), dir_.filePath("plain.png"), 1.0);
        const QImage exported(dir_.filePath("live.png"));
        QVERIFY(!exported.isNull());
        // The selection's blue (frame and tint) appears nowhere; the picture is the one without any live state.
        int selection_blue = 0;
        for (int y = 0; y < exported.height(); ++y)
            for (int x = 0; x < exported.width(); ++x) selection_blue += exported.pixel(x, y) == qRgb(0x0d, 0x47, 0xa1) ? 1 : 0;
        QCOMPARE(selection_blue, 0);
        QVERIFY(exported == QImage(dir_.filePath("plain.png")));
    }

    void svgHasNoSelectionFocusOrDropHint() {
        export_floorplan_svg(live(), dir_.filePath("live.svg"));
        export_floorplan_svg(scene(), dir_.filePath("plain.svg"));
        const QByteArray svg = read("live.svg");
        QVERIFY(svg.size() > 1000);
        QVERIFY2(!svg.contains("#0d47a1"), "the selection's colour is in the exported SVG");
        QCOMPARE(svg, read("plain.svg"));
    }
};

QTEST_MAIN(FloorplanExportTest)
#include "test_floorplan_export.moc"
