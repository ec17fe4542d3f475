// EnginesView / EnginesModel: the recorded H200's 23 engines on their runlists, the ones whose runlist
// was not recorded grouped under the reason, TSGs and channels where a source has them, and the model
// contract (QAbstractItemModelTester) on every GPU shape.
#include <QAbstractItemModelTester>
#include <QTest>
#include <QTreeView>

#include "engines_model.hpp"
#include "engines_view.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

Gpu builtin(const char* name) { return load_snapshot(std::string("builtin:") + name).gpus.at(0); }

QString cell(const QAbstractItemModel& model, const QModelIndex& parent, int row, int column) {
    return model.index(row, column, parent).data().toString();
}

EnginesModel::RowKind kind_of(const QModelIndex& index) {
    return static_cast<EnginesModel::RowKind>(index.data(EnginesModel::RowKindRole).toInt());
}

int count_kind(const QAbstractItemModel& model, const QModelIndex& parent, EnginesModel::RowKind kind) {
    int count = 0;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex child = model.index(row, 0, parent);
        if (kind_of(child) == kind) ++count;
        count += count_kind(model, child, kind);
    }
    return count;
}

// A live GPU as a non-root reader sees it: the runlists of most engines need root, one runlist's TSGs
// and channels were read (as root, on another source).
Gpu live_like() {
    Gpu gpu;
    const Provenance rm{Source::rmctrl, "GPU_GET_ENGINES_V2"};
    gpu.engines = {Engine{"GR0", EngineKind::graphics, 0, known_fact(0, rm), unknown_fact<int>("not read", rm), rm},
                   Engine{"COPY0", EngineKind::copy, 0, known_fact(0, rm), unknown_fact<int>("not read", rm), rm},
                   Engine{"NVDEC0", EngineKind::video_decoder, 0, unknown_fact<int>("needs root", rm), unknown_fact<int>("not read", rm), rm},
                   Engine{"NVJPG0", EngineKind::jpeg, 0, unknown_fact<int>("not available on this GPU", rm), unknown_fact<int>("not read", rm), rm},
                   Engine{"NVENC0", EngineKind::video_encoder, 0, unknown_fact<int>("needs root", rm), unknown_fact<int>("not read", rm), rm}};
    const Provenance debug{Source::nvdebug, "/proc/gpu0/runlist0"};
    Runlist runlist;
    runlist.id = 0;
    runlist.from = debug;
    runlist.tsgs = {Tsg{5, 1234, {Channel{8, 1234, debug}, Channel{9, 1234, debug}}, debug}, Tsg{6, std::nullopt, {}, debug}};
    Runlist bare;
    bare.id = 7;
    bare.from = rm;
    bare.channel_ids = {3, 4};
    bare.tsg_count = known_fact(2, rm);
    gpu.runlists = {runlist, bare};
    return gpu;
}

}  // namespace

class TestEnginesView : public QObject {
    Q_OBJECT
private slots:
    void h200RunlistsAndUnknownGroup() {
        EnginesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGpu(builtin("h200"));
        QCOMPARE(count_kind(model, {}, EnginesModel::RowKind::engine), 23);
        // The H200's 20 runlists as read as root (root-h200.txt), then one group for the engine without one.
        QCOMPARE(model.rowCount(), 21);
        QCOMPARE(cell(model, {}, 0, EnginesModel::NameColumn), QStringLiteral("runlist 0"));
        QCOMPARE(cell(model, {}, 6, EnginesModel::NameColumn), QStringLiteral("runlist 10"));
        QCOMPARE(cell(model, model.index(6, 0), 0, EnginesModel::NameColumn), QStringLiteral("COPY4"));
        const QModelIndex runlist0 = model.index(0, 0);
        QCOMPARE(cell(model, runlist0, 0, EnginesModel::NameColumn), QStringLiteral("GR0"));
        QCOMPARE(cell(model, runlist0, 1, EnginesModel::NameColumn), QStringLiteral("COPY0 (GRCE)"));
        QCOMPARE(cell(model, runlist0, 1, EnginesModel::KindColumn), QStringLiteral("copy · GRCE"));
        QCOMPARE(cell(model, runlist0, 2, EnginesModel::NameColumn), QStringLiteral("COPY1 (GRCE)"));
        QVERIFY(cell(model, runlist0, 0, EnginesModel::SourceColumn).startsWith(QStringLiteral("recorded: tests/fixtures/live-h200/")));
        // The recording has runlist 0's channel ids but no TSGs per runlist: a row of channels, one note why.
        QCOMPARE(cell(model, runlist0, 3, EnginesModel::NameColumn), QStringLiteral("channels 1, 2, 3"));
        QCOMPARE(kind_of(model.index(3, 0, runlist0)), EnginesModel::RowKind::channels);
        QCOMPARE(cell(model, runlist0, 4, EnginesModel::NameColumn),
                 QStringLiteral("TSGs and channels: the driver counts TSGs for the whole GPU only"));
        QCOMPARE(kind_of(model.index(4, 0, runlist0)), EnginesModel::RowKind::note);

        const QModelIndex unknown = model.index(20, 0);
        QCOMPARE(kind_of(unknown), EnginesModel::RowKind::unknown_runlist);
        QCOMPARE(cell(model, {}, 20, EnginesModel::NameColumn), QStringLiteral("runlist: the driver gives this engine no runlist"));
        QCOMPARE(model.rowCount(unknown), 1);
        QCOMPARE(cell(model, unknown, 0, EnginesModel::NameColumn), QStringLiteral("SW"));
        QCOMPARE(cell(model, unknown, 0, EnginesModel::RunlistColumn), QStringLiteral("the driver gives this engine no runlist"));
        QVERIFY(model.index(0, EnginesModel::SourceColumn, unknown).data(Qt::ToolTipRole).toString().contains(QStringLiteral("runlist: recorded")));
    }

    void needsRootAndTsgsWhereASourceHasThem() {
        EnginesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGpu(live_like());
        // runlist 0, runlist 7, then "needs root" and "not available on this GPU" in the order first met.
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(cell(model, {}, 2, EnginesModel::NameColumn), QStringLiteral("runlist: needs root"));
        QCOMPARE(model.rowCount(model.index(2, 0)), 2);  // NVDEC0 and NVENC0
        QCOMPARE(cell(model, model.index(2, 0), 1, EnginesModel::NameColumn), QStringLiteral("NVENC0"));
        QCOMPARE(cell(model, {}, 3, EnginesModel::NameColumn), QStringLiteral("runlist: not available on this GPU"));
        QCOMPARE(cell(model, model.index(3, 0), 0, EnginesModel::RunlistColumn), QStringLiteral("not available on this GPU"));

        const QModelIndex runlist0 = model.index(0, 0);
        QCOMPARE(model.rowCount(runlist0), 4);  // GR0, COPY0, TSG 5, TSG 6: no "not read" note when TSGs were read
        const QModelIndex tsg5 = model.index(2, 0, runlist0);
        QCOMPARE(tsg5.data().toString(), QStringLiteral("TSG 5 · pid 1234"));
        QCOMPARE(model.rowCount(tsg5), 2);
        QCOMPARE(cell(model, tsg5, 1, EnginesModel::NameColumn), QStringLiteral("channel 9 · pid 1234"));
        QCOMPARE(cell(model, tsg5, 1, EnginesModel::SourceColumn), QStringLiteral("nvdebug: /proc/gpu0/runlist0"));
        QCOMPARE(model.parent(model.index(1, 0, tsg5)), tsg5);

        const QModelIndex runlist7 = model.index(1, 0);  // no engine named it, only channel ids and a count
        QCOMPARE(cell(model, runlist7, 0, EnginesModel::NameColumn), QStringLiteral("channels 3, 4"));
        QCOMPARE(cell(model, runlist7, 1, EnginesModel::NameColumn), QStringLiteral("2 TSGs in use"));
        QVERIFY(runlist7.data(Qt::ToolTipRole).toString().contains(QStringLiteral("no engine a source named")));
    }

    void gpuWithoutEngineTableSaysSo() {
        EnginesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGpu(builtin("h200"));
        model.setGpu(Gpu{});  // a reset from a full tree to an empty one
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(cell(model, {}, 0, 0), QStringLiteral("No engine table for this GPU: no source gave one"));
        model.setGpu(builtin("gtx1060"));
        QCOMPARE(count_kind(model, {}, EnginesModel::RowKind::engine), 8);
        QCOMPARE(count_kind(model, {}, EnginesModel::RowKind::unknown_runlist), 0);
    }

    void viewSummaryAndScreenshot() {
        EnginesView view;
        view.setGpu(builtin("h200"));
        QCOMPARE(engines_summary(builtin("h200")),
                 QStringLiteral("23 engines · 22 on 20 runlists · 1 with runlist unknown: the driver gives this engine no runlist"));
        QVERIFY(view.tree()->isExpanded(view.model()->index(0, 0)));
        QVERIFY(gpupart::test::save_screenshot(view, QStringLiteral("engines_view"), {980, 640}));
    }
};

QTEST_MAIN(TestEnginesView)
#include "test_engines_view.moc"
