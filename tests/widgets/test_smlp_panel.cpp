// The SMLP dock on hand-made controller states: components with their holders and queues in order, the
// table's processes named and coloured, problems and dead holders in red, and refreshes that keep the
// user's selection and collapsed components while times move.
#include <QTest>
#include <QTreeWidget>

#include "controller/system_state.hpp"
#include "screenshot.hpp"
#include "smlp_panel.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

const char* const kGpu = "GPU-00000000-0000-0000-0000-000000000001";

SmlpRequest request(gpupart_smlp_queue queue, int record, int pid, int priority, std::uint64_t ticket, const std::string& label,
                    TpcMask granted = {}) {
    SmlpRequest r;
    r.queue = queue;
    r.record = record;
    r.pid = pid;
    r.priority = priority;
    r.ticket = ticket;
    r.label = label;
    r.granted = granted;
    r.issued_ns = 1'000'000'000;
    r.satisfied_ns = queue == GPUPART_SMLP_SQ ? 1'500'000'000 : 0;
    return r;
}

SystemState state_with_components(std::uint64_t now_ns) {
    SystemState state;
    state.gpu_uuid = kGpu;
    state.smlp_read_ns = now_ns;
    SmlpComponent camera;
    camera.path = "/run/gpupart/u1000/camera.smlp";
    camera.name = "camera";
    camera.owner = 0;
    camera.gpu = kGpu;
    camera.tpcs = TpcMask::range(0, 7);
    camera.size = 8;
    camera.granularity = 2;
    camera.fq_length = 2;
    camera.sq = {request(GPUPART_SMLP_SQ, 0, 4101, 5, 1, "detect", TpcMask::range(0, 3)),
                 request(GPUPART_SMLP_SQ, 3, 777, 2, 2, "<b>track</b>", TpcMask::range(4, 5))};
    camera.sq[1].liveness = Liveness::gone;
    camera.fq = {request(GPUPART_SMLP_FQ, 1, 4102, 9, 3, "plan")};
    camera.pq = {request(GPUPART_SMLP_PQ, 2, 4101, 1, 4, "batch")};
    camera.free = TpcMask::range(6, 7);
    SmlpComponent elsewhere = camera;
    elsewhere.path = "/run/gpupart/u1000/lidar.smlp";
    elsewhere.name = "lidar";
    elsewhere.gpu = "GPU-258f535b-999d-058c-3642-767b7fb8d4f0";
    elsewhere.sq.clear();
    elsewhere.fq.clear();
    elsewhere.pq.clear();
    elsewhere.free = elsewhere.tpcs;
    state.smlp = {{camera.path, camera, ""}, {elsewhere.path, elsewhere, ""},
                  {"/run/gpupart/u1000/bad.smlp", std::nullopt, "/run/gpupart/u1000/bad.smlp: is a FIFO, not an SMLP component file"}};
    return state;
}

std::map<int, KnownProcess> known() { return {{4101, {"4101 llm-serving", QColor(0x1f, 0x77, 0xb4)}}, {4102, {"4102 vision", QColor(0xff, 0x7f, 0x0e)}}}; }

}  // namespace

class TestSmlpPanel : public QObject {
    Q_OBJECT
private slots:
    void componentsHoldersAndQueuesInOrder() {
        SmlpPanel panel;
        panel.setComponents(state_with_components(3'500'000'000), known());
        QTreeWidget* tree = panel.tree();
        QCOMPARE(tree->topLevelItemCount(), 3);
        QTreeWidgetItem* camera = tree->topLevelItem(0);
        QCOMPARE(camera->text(SmlpPanel::what), QString("camera"));
        QCOMPARE(camera->text(SmlpPanel::tpcs), QString("0-7 (H 8, h 2, M 2)"));
        QCOMPARE(camera->text(SmlpPanel::note), QString("free 6-7 · this GPU"));
        QVERIFY(camera->isExpanded());
        QCOMPARE(camera->childCount(), 4);
        QStringList order;
        for (int i = 0; i < camera->childCount(); ++i) order << camera->child(i)->text(SmlpPanel::what);
        QCOMPARE(order, (QStringList{"SQ #1", "SQ #2", "FQ #3", "PQ #4"}));
        QTreeWidgetItem* holder = camera->child(0);
        QCOMPARE(holder->text(SmlpPanel::process), QString("4101 llm-serving"));
        QVERIFY(!holder->icon(SmlpPanel::process).isNull());  // the table's colour
        QCOMPARE(holder->text(SmlpPanel::tpcs), QString("0-3"));
        QCOMPARE(holder->text(SmlpPanel::time), QString("held 2.0 s"));
        QTreeWidgetItem* dead = camera->child(1);
        QCOMPARE(dead->text(SmlpPanel::process), QString("777"));  // no row of the table: its pid
        QCOMPARE(dead->text(SmlpPanel::label), QString("<b>track</b>"));
        QVERIFY(dead->toolTip(SmlpPanel::label).contains("&lt;b&gt;"));  // rich-text tooltips escape it
        QCOMPARE(dead->text(SmlpPanel::note), QString("exited: its TPCs return at the next change"));
        QCOMPARE(dead->foreground(SmlpPanel::note).color(), QColor(0xc6, 0x28, 0x28));
        QCOMPARE(camera->child(2)->text(SmlpPanel::time), QString("waits 2.5 s"));
        QTreeWidgetItem* lidar = tree->topLevelItem(1);
        QCOMPARE(lidar->text(SmlpPanel::note), QString("free 0-7 · GPU-258f535b-999d-058c-3642-767b7fb8d4f0"));
        QCOMPARE(lidar->foreground(SmlpPanel::what).color(), QColor(Qt::gray));
        QTreeWidgetItem* bad = tree->topLevelItem(2);
        QCOMPARE(bad->text(SmlpPanel::what), QString("unreadable"));
        QVERIFY(bad->text(SmlpPanel::note).contains("is a FIFO"));
        QCOMPARE(panel.summary(), QString("2 components · 2 holding TPCs · 2 waiting · gpupart smlp lists the same"));
        QVERIFY(gpupart::test::save_screenshot(panel, "smlp_panel", QSize(900, 260)));
    }

    void refreshesKeepSelectionAndCollapsedComponents() {
        SmlpPanel panel;
        panel.setComponents(state_with_components(3'500'000'000), known());
        QTreeWidget* tree = panel.tree();
        QTreeWidgetItem* holder = tree->topLevelItem(0)->child(0);
        tree->setCurrentItem(holder);
        tree->topLevelItem(0)->setExpanded(false);
        // A second later: the same requests, longer times; changed in place.
        panel.setComponents(state_with_components(4'500'000'000), known());
        QCOMPARE(tree->topLevelItem(0)->child(0), holder);
        QCOMPARE(holder->text(SmlpPanel::time), QString("held 3.0 s"));
        QCOMPARE(tree->currentItem(), holder);
        // The holder leaves the SQ: the tree is rebuilt, the component stays collapsed, the selection is gone with it.
        SystemState changed = state_with_components(5'000'000'000);
        changed.smlp[0].component->sq.erase(changed.smlp[0].component->sq.begin());
        panel.setComponents(changed, known());
        QCOMPARE(tree->topLevelItem(0)->childCount(), 3);
        QVERIFY(!tree->topLevelItem(0)->isExpanded());
        QCOMPARE(panel.summary(), QString("2 components · 1 holding TPCs · 2 waiting · gpupart smlp lists the same"));
        // Nothing at all: says how components come to be.
        panel.setComponents(SystemState{}, known());
        QCOMPARE(tree->topLevelItemCount(), 0);
        QVERIFY(panel.summary().startsWith("No SMLP component"));
    }
};

QTEST_MAIN(TestSmlpPanel)
#include "test_smlp_panel.moc"
