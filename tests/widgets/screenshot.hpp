#pragma once
// Screenshots the widget tests leave in the build tree (tests/widgets/screenshots/NAME.png), so a person
// can look at what the offscreen widgets drew. Saving must work: a failed save fails the test.
#include <QCoreApplication>
#include <QDir>
#include <QPixmap>
#include <QString>
#include <QTest>
#include <QWidget>

namespace gpupart::test {

inline QString screenshot_path(const QString& name) {
    const QString dir = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots");
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + name + QStringLiteral(".png");
}

// Shows the widget at `size`, lets it lay out and paint, and saves what it drew.
inline bool save_screenshot(QWidget& widget, const QString& name, QSize size) {
    widget.resize(size);
    widget.show();
    if (!QTest::qWaitForWindowExposed(&widget)) return false;
    QCoreApplication::processEvents();
    return widget.grab().save(screenshot_path(name));
}

}  // namespace gpupart::test
