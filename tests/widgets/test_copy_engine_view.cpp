// The copy-engine wiring picture: the recorded H200's LCE -> PCE graph (LCE0/1 GRCE sharing PCEs 12-15
// with LCE2/3), hit testing and tooltips, PNG and SVG export, and a GPU whose wiring no source gave.
#include <QHelpEvent>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QXmlStreamReader>

#include "copy_engine_painter.hpp"
#include "copy_engine_view.hpp"
#include "model/user_error.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

Gpu builtin(const char* name) { return load_snapshot(std::string("builtin:") + name).gpus.at(0); }

const CopyEngineBox& box(const CopyEngineLayout& layout, CopyEngineBox::Kind kind, int index) {
    for (const CopyEngineBox& b : layout.boxes)
        if (b.kind == kind && b.index == index) return b;
    throw std::runtime_error("no such box");
}

QString svg_errors(const QByteArray& bytes, int* text_elements, QString* all_text) {
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QStringLiteral("text")) {
            ++*text_elements;
            *all_text += xml.readElementText(QXmlStreamReader::IncludeChildElements) + QLatin1Char('\n');
        }
    }
    return xml.hasError() ? xml.errorString() : QString();
}

}  // namespace

class TestCopyEngineView : public QObject {
    Q_OBJECT
private slots:
    void h200Wiring() {
        const CopyEngineLayout layout = layout_copy_engines(builtin("h200"));
        QVERIFY(layout.unavailable.isEmpty());
        QCOMPARE(layout.boxes.size(), std::size_t{5 + 16});
        QCOMPARE(layout.edges.size(), std::size_t{2 + 2 + 2 + 2 + 12});
        QVERIFY(box(layout, CopyEngineBox::Kind::lce, 0).grce);
        QVERIFY(box(layout, CopyEngineBox::Kind::lce, 1).grce);
        QVERIFY(!box(layout, CopyEngineBox::Kind::lce, 2).grce);
        for (int pce = 0; pce < 16; ++pce) QCOMPARE(box(layout, CopyEngineBox::Kind::pce, pce).shared, pce >= 12);
        QCOMPARE(box(layout, CopyEngineBox::Kind::pce, 14).detail, QStringLiteral("LCE 0, 2"));
        QCOMPARE(box(layout, CopyEngineBox::Kind::lce, 4).detail, QStringLiteral("→ PCE 0-11"));
        // Every edge joins its LCE's right side to its PCE's left side.
        for (const CopyEngineEdge& edge : layout.edges) {
            QCOMPARE(edge.from.x(), layout.boxes[static_cast<std::size_t>(edge.lce_box)].rect.right());
            QCOMPARE(edge.to.x(), layout.boxes[static_cast<std::size_t>(edge.pce_box)].rect.left());
            QVERIFY(layout.boxes[static_cast<std::size_t>(edge.pce_box)].rect.contains(edge.to + QPointF(1, 0)));
        }
        QStringList legend;
        for (const auto& row : layout.legend) legend << row.text;
        QVERIFY(legend.first().startsWith(QStringLiteral("shared physical copy engine (Bakita & Anderson, RTAS 2024, rule R8)")));
        QVERIFY(legend.contains(QStringLiteral("⚠ LCE0 and LCE2 share PCEs 12,14: their copies interfere (Bakita & Anderson, RTAS 2024, rule R8)")));
        QVERIFY(legend.last().startsWith(QStringLiteral("source: recorded: tests/fixtures/live-h200/live-h200.json (rmctrl: CE_GET_ALL_CAPS")));
        // Boxes and legend lie inside the picture.
        for (const CopyEngineBox& b : layout.boxes) QVERIFY(QRectF(QPointF(0, 0), layout.size).contains(b.rect));
        QVERIFY(layout.legend.back().rect.bottom() < layout.size.height());
        QCOMPARE(copy_engine_picture_size(builtin("h200")), layout.size);
    }

    void hitTestingAndTooltipOfASharedPce() {
        const CopyEngineLayout layout = layout_copy_engines(builtin("h200"));
        const CopyEngineBox& pce12 = box(layout, CopyEngineBox::Kind::pce, 12);
        QCOMPARE(layout.box_at(pce12.rect.center()), &pce12);
        QCOMPARE(layout.box_at(pce12.rect.center() + QPointF(pce12.rect.width(), 0)), nullptr);  // right of it: nothing
        QVERIFY(pce12.tooltip.contains(QStringLiteral("shared physical copy engine (Bakita & Anderson, RTAS 2024, rule R8)")));
        QVERIFY(pce12.tooltip.contains(QStringLiteral("LCE0 (GRCE) and LCE2")));
        QVERIFY(pce12.tooltip.contains(QStringLiteral("source: recorded:")));
        const QString lce0 = box(layout, CopyEngineBox::Kind::lce, 0).tooltip;
        QVERIFY(lce0.contains(QStringLiteral("graphics copy engine (GRCE)")));
        QVERIFY(lce0.contains(QStringLiteral("shares PCE12, PCE14 with LCE2")));
        QVERIFY(lce0.contains(QStringLiteral("caps: GRCE, SHARED (0xe303)")));

        // The widget scales the picture; its hit testing maps back through the same transform.
        CopyEngineView view;
        view.setGpu(builtin("h200"));
        view.resize(900, 1000);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QTransform to_widget = copy_engine_transform(layout.size, QRectF(view.rect()).adjusted(4, 4, -4, -4));
        const QPointF at = to_widget.map(pce12.rect.center());
        const CopyEngineBox* hit = view.boxAt(at);
        QVERIFY(hit != nullptr);
        QCOMPARE(hit->index, 12);
        QCOMPARE(hit->kind, CopyEngineBox::Kind::pce);
        QHelpEvent help(QEvent::ToolTip, at.toPoint(), view.mapToGlobal(at.toPoint()));
        QCoreApplication::sendEvent(&view, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY(QToolTip::text().contains(QStringLiteral("shared physical copy engine (Bakita & Anderson, RTAS 2024, rule R8)")));

        // Pointing at LCE0 raises its edges: the picture changes.
        const QImage before = view.grab().toImage();
        QTest::mouseMove(&view, to_widget.map(box(layout, CopyEngineBox::Kind::lce, 0).rect.center()).toPoint());
        QTRY_VERIFY(view.grab().toImage() != before);
        QVERIFY(gpupart::test::save_screenshot(view, QStringLiteral("copy_engine_view_hover_lce0"), view.size()));
        QTest::mouseMove(&view, QPoint(2, 2));
        QVERIFY(gpupart::test::save_screenshot(view, QStringLiteral("copy_engine_view"), layout.size.toSize() + QSize(8, 8)));
    }

    // A wide pane (the bottom dock) gets LCEs in a row above the PCEs: the same graph, larger there.
    void wideLayoutForAWidePane() {
        const Gpu gpu = builtin("h200");
        const CopyEngineLayout columns = layout_copy_engines(gpu);
        const CopyEngineLayout rows = layout_copy_engines(gpu, CopyEngineLayout::Flow::top_to_bottom);
        QCOMPARE(rows.boxes.size(), columns.boxes.size());
        QCOMPARE(rows.edges.size(), columns.edges.size());
        QCOMPARE(rows.legend.size(), columns.legend.size());
        QVERIFY(rows.size.width() > rows.size.height() * 2);  // wide where the columns are tall
        for (const CopyEngineBox& b : rows.boxes) QVERIFY(QRectF(QPointF(0, 0), rows.size).contains(b.rect));
        for (const CopyEngineEdge& edge : rows.edges) {  // every edge runs from an LCE's bottom down to a PCE's top
            const QRectF from = rows.boxes[static_cast<std::size_t>(edge.lce_box)].rect;
            const QRectF to = rows.boxes[static_cast<std::size_t>(edge.pce_box)].rect;
            QCOMPARE(edge.from.y(), from.bottom());
            QCOMPARE(edge.to.y(), to.top());
            QVERIFY(from.left() <= edge.from.x() && edge.from.x() <= from.right());
            QVERIFY(to.contains(edge.to + QPointF(0, 1)));
        }
        QVERIFY(rows.legend.front().rect.top() > box(rows, CopyEngineBox::Kind::pce, 0).rect.bottom());

        CopyEngineView view;
        view.setGpu(gpu);
        view.resize(1500, 340);  // the bottom dock of a 1500x1000 window
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.pictureLayout().flow, CopyEngineLayout::Flow::top_to_bottom);
        const double columns_scale = std::min(1492 / columns.size.width(), 332 / columns.size.height());
        QVERIFY2(view.pictureScale() > 1.4 * columns_scale, qPrintable(QString("%1 vs %2").arg(view.pictureScale()).arg(columns_scale)));
        // Hit testing follows the layout shown.
        const QTransform to_widget = copy_engine_transform(rows.size, QRectF(view.rect()).adjusted(4, 4, -4, -4));
        const CopyEngineBox* hit = view.boxAt(to_widget.map(box(rows, CopyEngineBox::Kind::pce, 13).rect.center()));
        QVERIFY(hit != nullptr);
        QCOMPARE(hit->index, 13);
        QVERIFY(gpupart::test::save_screenshot(view, QStringLiteral("copy_engine_view_wide"), view.size()));
        view.resize(700, 1000);  // tall again: the columns
        QCoreApplication::processEvents();
        QCOMPARE(view.pictureLayout().flow, CopyEngineLayout::Flow::left_to_right);
    }

    void exportsPngAndSvg() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Gpu gpu = builtin("h200");
        const CopyEngineLayout layout = layout_copy_engines(gpu);
        const QString png = dir.filePath(QStringLiteral("ce.png"));
        export_copy_engines_png(gpu, png);
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), (layout.size * 2).toSize());
        // A shared PCE is filled with the highlight colour (sampled inside its border, above its text).
        const QRectF pce13 = box(layout, CopyEngineBox::Kind::pce, 13).rect;
        QCOMPARE(image.pixelColor(QPointF(pce13.center().x(), pce13.top() + 3).toPoint() * 2), QColor(0xfd, 0xe3, 0xcf));
        const QRectF pce3 = box(layout, CopyEngineBox::Kind::pce, 3).rect;
        QCOMPARE(image.pixelColor(QPointF(pce3.center().x(), pce3.top() + 3).toPoint() * 2), QColor(0xf3, 0xf5, 0xf7));

        const QString svg = dir.filePath(QStringLiteral("ce.svg"));
        export_copy_engines_svg(gpu, svg);
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        int texts = 0;
        QString all_text;
        QCOMPARE(svg_errors(file.readAll(), &texts, &all_text), QString());
        QVERIFY(texts > 21);  // at least a label per box
        QVERIFY(all_text.contains(QStringLiteral("PCE15")));
        QVERIFY(all_text.contains(QStringLiteral("GRCE")));
        // Drawn back, the SVG is the same picture: the shared PCE has its highlight where the layout put it.
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBoxF(), QRectF(QPointF(0, 0), layout.size));
        QImage drawn(layout.size.toSize(), QImage::Format_ARGB32_Premultiplied);
        drawn.fill(Qt::black);
        {
            QPainter painter(&drawn);
            renderer.render(&painter);
        }
        QCOMPARE(drawn.pixelColor(QPointF(pce13.center().x(), pce13.top() + 3).toPoint()), QColor(0xfd, 0xe3, 0xcf));
        QCOMPARE(drawn.pixelColor(QPoint(2, 2)), QColor(Qt::white));
        QVERIFY(drawn.save(gpupart::test::screenshot_path(QStringLiteral("copy_engine_svg_drawn_back"))));

        // A path that cannot be written: one line naming it, and nothing left behind.
        const QString bad = dir.filePath(QStringLiteral("missing/dir/ce.png"));
        try {
            export_copy_engines_png(gpu, bad);
            QFAIL("export into a missing directory succeeded");
        } catch (const UserError& error) {
            const QString message = QString::fromStdString(error.what());
            QVERIFY2(message.startsWith(bad + QStringLiteral(": cannot write the copy-engine image")), qPrintable(message));
            QVERIFY(!message.contains(QLatin1Char('\n')));
        }
        QVERIFY_THROWS_EXCEPTION(UserError, export_copy_engines_svg(gpu, bad));
    }

    void gpuWithoutWiringSaysWhy() {
        const CopyEngineLayout layout = layout_copy_engines(builtin("gtx1060"));
        QVERIFY(layout.boxes.empty());
        QCOMPARE(layout.unavailable,
                 QStringLiteral("No LCE → PCE wiring for this GPU: Fig. 11 is a drawing; its wiring is not in gpupart's copy of the paper"));
        QVERIFY(layout.legend.back().text.contains(QStringLiteral("Bakita & Anderson, RTAS 2024")));
        CopyEngineView view;
        view.setGpu(builtin("gtx1060"));
        QCOMPARE(view.boxAt(QPointF(50, 50)), nullptr);
        QVERIFY(gpupart::test::save_screenshot(view, QStringLiteral("copy_engine_view_gtx1060"), layout.size.toSize() + QSize(8, 8)));
        QTemporaryDir dir;
        export_copy_engines_png(builtin("gtx1060"), dir.filePath(QStringLiteral("none.png")));
        QVERIFY(!QImage(dir.filePath(QStringLiteral("none.png"))).isNull());
    }
};

QTEST_MAIN(TestCopyEngineView)
#include "test_copy_engine_view.moc"
