// What drawing the floorplan costs: layout, painting the H200 (66 TPCs, 62 holes, 4 or 15 owners, with
// and without shared TPCs and a selection) into a window-sized image, and building the process rows
// for 15 processes. Side by side in one run; README "Performance" has the figures.
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include "floorplan_painter.hpp"
#include "model/gpu_queries.hpp"
#include "owner_colors.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

// `count` owners: the first four own GPC pairs/whole GPCs, the rest single TPCs; `shared` makes the
// last owner overlap the first (hatched tiles).
std::vector<FloorplanOwner> owners(int count, bool shared) {
    std::vector<FloorplanOwner> result;
    const std::vector<int> bits = real_tpcs(h200()).bits();
    for (int i = 0; i < count; ++i) {
        TpcMask mask;
        if (i < 4) mask = gpc_tpcs(h200(), 2 * i) | gpc_tpcs(h200(), 2 * i + 1);
        else mask.set(bits[static_cast<std::size_t>(i * 3) % bits.size()]);
        result.push_back({1000 + i, 0, QString("%1 worker-%2").arg(1000 + i).arg(i), owner_color(1000 + i, 0), mask});
    }
    if (shared && count > 1) result.back().mask |= gpc_tpcs(h200(), 0);
    return result;
}

void paint(benchmark::State& state, int owner_count, bool shared, bool selection) {
    FloorplanScene scene;
    scene.gpu = &h200();
    scene.owners = owners(owner_count, shared);
    if (selection) scene.selection = gpc_tpcs(h200(), 3);
    const FloorplanGeometry geometry = FloorplanGeometry::layout(h200(), scene.legend_entry_count());
    QImage image(geometry.size().toSize(), QImage::Format_ARGB32_Premultiplied);
    for (auto _ : state) {
        image.fill(Qt::white);
        QPainter painter(&image);
        paint_floorplan(painter, geometry, scene);
        painter.end();
        benchmark::DoNotOptimize(image.constBits());
    }
    state.counters["px"] = geometry.size().width() * geometry.size().height();
}

void BM_LayoutH200(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(FloorplanGeometry::layout(h200(), 7));
}
BENCHMARK(BM_LayoutH200);

void BM_PaintH200_4Owners(benchmark::State& state) { paint(state, 4, false, false); }
void BM_PaintH200_15OwnersSharedSelected(benchmark::State& state) { paint(state, 15, true, true); }
BENCHMARK(BM_PaintH200_4Owners)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PaintH200_15OwnersSharedSelected)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);  // fonts
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
