#pragma once
// What the two tests of the real window on the demo share (test_main_window_views.cpp and
// test_main_window_actions.cpp): the window over the demo's real worker processes in a private registry,
// opened once per test class; a process's pid and its mask as the registry holds it; TPC sets and vision's
// masks in TPC numbers; and screenshots to $GPUPART_SCREENSHOTS when it is set (docs/screenshots/README.md).
#include <QPoint>
#include <QRectF>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>

#include <initializer_list>
#include <memory>

#include "gui_session.hpp"
#include "main_window.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "registry/registry.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::test::main_window {

inline int pid_of(const gui::GuiSession& session, const QString& name) {
    for (const widgets::ProcessRow& row : session.rows())
        if (row.command.contains(name)) return row.pid;
    return 0;
}

// The mask as TPC numbers: the registry reads the slot's descriptor bits through the built-in H200's map.
inline QString mask_in_registry(int pid) {
    static const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
    const SlotRecord record = Registry(Registry::default_directory(), h200).find_live(pid);
    const GpuControl* entry = record.control ? record.control->gpu("GPU-00000000-0000-0000-0000-000000000001") : nullptr;
    return entry != nullptr && entry->has_mask ? QString::fromStdString(entry->allowed.to_list()) : "all";
}

inline QPoint center_of(const QRectF& rect) { return rect.center().toPoint(); }

inline TpcMask tpcs_of(std::initializer_list<int> numbers) {
    TpcMask mask;
    for (int number : numbers) mask.set(number);
    return mask;
}

// vision's gpc4-5 as TPC numbers (descriptor bits 36-43,45-52); with gpc7's 7,15,23,31 given; without 4 and 12.
inline constexpr const char* kVision = "4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57";
inline constexpr const char* kVisionPlusFour = "4-5,7,12-13,15,20-21,23,28-29,31,35-36,42-43,49-50,56-57";
inline constexpr const char* kVisionLessTwo = "5,13,20-21,28-29,35-36,42-43,49-50,56-57";

inline void save_screenshot(QWidget* widget, const QString& name) {
    const QString dir = qEnvironmentVariable("GPUPART_SCREENSHOTS");
    if (dir.isEmpty()) return;
    QVERIFY(widget->grab().save(dir + "/" + name));
}

// The window on the demo with its session, for a test class (a QObject that also derives from this):
// its initTestCase opens them, its cleanupTestCase closes them, and its slots use session_ and window_.
class DemoWindowFixture {
protected:
    std::unique_ptr<gui::GuiSession> session_;
    std::unique_ptr<gui::MainWindow> window_;
    QTemporaryDir settings_dir_;

    // A failed check here fails initTestCase, and QtTest then runs none of the class's tests.
    void openDemoWindow() {
        qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8());  // QSettings of the test, not the user's
        gui::SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        options.demo_app_masks = true;  // vision also plays a program that chooses its own masks (libgpupart.so)
        session_ = std::make_unique<gui::GuiSession>(options);
        window_ = std::make_unique<gui::MainWindow>(*session_);
        window_->resize(1500, 1000);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        window_->setRefreshHz(0);  // the test refreshes when it needs to
        QCOMPARE(session_->rows().size(), std::size_t{4});
    }

    void closeDemoWindow() {
        window_.reset();
        session_.reset();
    }

    // The centre of a process's row in the process table (through its sort proxy), in the viewport.
    QPoint rowCenter(int pid) {
        widgets::ProcessTableView* table = window_->processTable();
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex index = table->model()->index(row, 2);
            if (index.data(widgets::ProcessTableModel::PidRole).toInt() == pid) return table->visualRect(index).center();
        }
        return {};
    }
};

}  // namespace gpupart::test::main_window
