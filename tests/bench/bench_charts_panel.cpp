// What one refresh costs the charts panel at the GUI's default rate (4 Hz) with 15 processes, once the
// five-minute window is full (1200 samples a series), so every sample appends a point to each series
// and drops the oldest:
//   - AddSampleHidden: the panel not on screen (its dock tab not raised): the sample is only queued;
//   - AddSample: the series and axes updates alone (the panel on screen, not painted);
//   - AddSampleAndPaint: the same plus the repaint Qt then does, as in the app (the panel on screen at 960x640,
//     offscreen): the charts are drawn at the first sample of each second, so one sample in four repaints.
// At 4 Hz the CPU share is 4 x the time per iteration: 1 ms per iteration = 0.4% of one core.
//   bench_charts_panel [--benchmark_repetitions=5 ...]
#include <benchmark/benchmark.h>

#include <cmath>

#include <QApplication>

#include "charts_panel.hpp"

using gpupart::widgets::ChartsPanel;
using gpupart::widgets::ProcessSample;

namespace {

constexpr qint64 kTickMs = 250;  // 4 Hz

std::vector<ProcessSample> sample_at(qint64 tick, int processes) {
    std::vector<ProcessSample> samples;
    for (int p = 0; p < processes; ++p)
        samples.push_back({5000 + p, 1000u + static_cast<std::uint64_t>(p), QStringLiteral("%1 worker").arg(5000 + p),
                           500 + 400 * std::sin(static_cast<double>(tick) / (10.0 + p)), 1.0 / processes});
    return samples;
}

// 5 minutes of samples more, from `first`: the next tick.
qint64 fill_from(ChartsPanel& panel, int processes, qint64 first) {
    const qint64 ticks = ChartsPanel::kWindowMs / kTickMs;
    for (qint64 tick = first; tick <= first + ticks; ++tick) panel.addSample(1'790'000'000'000 + tick * kTickMs, sample_at(tick, processes));
    return first + ticks + 1;
}

// A panel with a full window: 5 minutes of samples already in.
qint64 fill(ChartsPanel& panel, int processes) { return fill_from(panel, processes, 0); }

void AddSampleHidden(benchmark::State& state) {
    ChartsPanel panel;
    panel.show();
    const auto processes = static_cast<int>(state.range(0));
    qint64 tick = fill(panel, processes);
    panel.setOnScreen(false);
    tick = fill_from(panel, processes, tick);  // a full queue: each sample now also drops the oldest
    for (auto _ : state) {
        panel.addSample(1'790'000'000'000 + tick * kTickMs, sample_at(tick, processes));
        ++tick;
    }
}
BENCHMARK(AddSampleHidden)->Arg(15)->Unit(benchmark::kMicrosecond);

void AddSample(benchmark::State& state) {
    ChartsPanel panel;
    panel.resize(960, 640);
    panel.show();
    const auto processes = static_cast<int>(state.range(0));
    qint64 tick = fill(panel, processes);
    for (auto _ : state) {
        panel.addSample(1'790'000'000'000 + tick * kTickMs, sample_at(tick, processes));
        ++tick;
    }
}
BENCHMARK(AddSample)->Arg(15)->Unit(benchmark::kMicrosecond);

void AddSampleAndPaint(benchmark::State& state) {
    ChartsPanel panel;
    panel.resize(960, 640);
    panel.show();
    const auto processes = static_cast<int>(state.range(0));
    qint64 tick = fill(panel, processes);
    for (auto _ : state) {
        panel.addSample(1'790'000'000'000 + tick * kTickMs, sample_at(tick, processes));
        QCoreApplication::processEvents();  // the repaint of what changed, as the app's event loop does
        ++tick;
    }
}
// 0 processes: what painting the two empty charts costs, the floor under the figure for 15.
BENCHMARK(AddSampleAndPaint)->Arg(0)->Arg(15)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);  // takes its --benchmark_* flags out before Qt sees the rest
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
