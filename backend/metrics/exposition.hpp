#pragma once
// gpupart's facts as Prometheus metrics (docs/metrics.md): per GPU, how its TPCs are given out, its
// processes, MPS and the controller's findings; per process on a GPU, what it holds, what its shim
// does, its launches and CUDA graphs. Built fresh at every scrape from the controller's per-GPU state,
// so an exited process simply has no series any more (bounded cardinality). Reads, never writes.
#include <cstdint>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "controller/system_state.hpp"
#include "metrics/set_latency.hpp"

namespace gpupart {

struct ExpositionContext {
    std::string hostname;      // the Hostname/hostname labels (dcgm-exporter's)
    std::uint64_t now_ns = 0;  // realtime, for seconds since the last launch
};

// The longest command label (characters of its one-line form): a bounded label keeps series small and
// a command line from flooding a dashboard.
inline constexpr std::size_t kCommandLabelChars = 120;

// Every metric for these GPU states (one per GPU of the machine). `latency` has observed them already.
std::vector<prometheus::MetricFamily> gpupart_metrics(const std::vector<SystemState>& gpus, const SetLatency& latency,
                                                      const ExpositionContext& context);

// The text exposition format (what /metrics serves and --textfile holds).
std::string exposition_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace gpupart
