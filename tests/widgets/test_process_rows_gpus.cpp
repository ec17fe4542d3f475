// The process table on a multi-GPU machine: rows come from one GPU's controller state, and
// the GPU column says when a process is on other GPUs too, naming them by UUID in its tooltip.
#include <QLabel>
#include <QTest>
#include <QTreeView>
#include <QVBoxLayout>

#include "controller/system_state.hpp"
#include "model/gpu_queries.hpp"
#include "process_rows.hpp"
#include "process_table_model.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

const char* const kOther = "GPU-258f535b-999d-058c-3642-767b7fb8d4f0";

SystemState two_gpu_state() {
    SystemState state;
    state.gpu = load_snapshot(std::string(GPUPART_FIXTURES) + "/multi-gpu/three-gpus.json").gpus.at(0);
    state.gpu_uuid = gpu_key(state.gpu);
    ProcessState here;  // on this GPU only
    here.pid = 100;
    here.partitioned = true;
    here.mask = TpcMask::range(0, 3);
    here.gpus = {state.gpu_uuid};
    ProcessState both;  // on this GPU and another
    both.pid = 200;
    both.gpus = {state.gpu_uuid, kOther};
    ProcessState none;  // no context on any GPU yet
    none.pid = 300;
    state.processes = {here, both, none};
    return state;
}

}  // namespace

class TestProcessRowsGpus : public QObject {
    Q_OBJECT
private slots:
    void theGpuColumnSaysWhenAProcessIsOnOtherGpus() {
        LaunchRates rates(std::chrono::milliseconds(250));
        ProcessTableModel model;
        model.setRows(process_rows(two_gpu_state(), rates, LaunchRates::Clock::now()));
        QCOMPARE(model.rowCount(), 3);
        const auto cell = [&](int row, int role) { return model.data(model.index(row, ProcessTableModel::gpu), role).toString(); };
        QCOMPARE(cell(0, Qt::DisplayRole), QString("0"));
        QCOMPARE(cell(1, Qt::DisplayRole), QString("0 +1"));
        QVERIFY2(cell(1, Qt::ToolTipRole).contains(kOther), qPrintable(cell(1, Qt::ToolTipRole)));
        QVERIFY2(cell(2, Qt::ToolTipRole).contains("no context on any GPU yet"), qPrintable(cell(2, Qt::ToolTipRole)));
        QVERIFY(model.headerData(ProcessTableModel::gpu, Qt::Horizontal, Qt::ToolTipRole).toString().contains("other GPUs"));
        // What a person sees: the table, and the GPU cell's tooltip of the process on two GPUs below it.
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* table = new QTreeView(&window);
        table->setModel(&model);
        layout->addWidget(table);
        auto* tip = new QLabel(cell(1, Qt::ToolTipRole), &window);
        tip->setStyleSheet(QStringLiteral("background: #ffffdc; border: 1px solid #999; padding: 4px"));
        layout->addWidget(tip);
        QVERIFY(gpupart::test::save_screenshot(window, QStringLiteral("process_rows_gpus"), QSize(1000, 240)));
    }
};

QTEST_MAIN(TestProcessRowsGpus)
#include "test_process_rows_gpus.moc"
