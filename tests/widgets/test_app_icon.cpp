// The window icon is the packaged icon (resources/icons), compiled in: both sizes load, and the 128 px one
// is the committed PNG pixel for pixel.
#include <QApplication>
#include <QImage>
#include <QPixmap>
#include <QTest>

#include "app_icon.hpp"

class AppIconTest : public QObject {
    Q_OBJECT
private slots:
    void bothSizesAreThePackagedPngs() {
        const QIcon icon = gpupart::gui::app_icon();
        QVERIFY(!icon.isNull());
        const QList<QSize> sizes = icon.availableSizes();
        QVERIFY(sizes.contains(QSize(48, 48)));
        QVERIFY(sizes.contains(QSize(128, 128)));
        // Both through QPixmap, which stores the PNG premultiplied: compared as QImages they would differ in
        // the antialiased edge pixels' rounding, not in the picture.
        const QPixmap packaged(QStringLiteral(GPUPART_SOURCE_DIR "/resources/icons/gpupart-gui-128.png"));
        QVERIFY(!packaged.isNull());
        QCOMPARE(icon.pixmap(QSize(128, 128)).toImage(), packaged.toImage());
    }
};

QTEST_MAIN(AppIconTest)
#include "test_app_icon.moc"
