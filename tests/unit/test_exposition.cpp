// The exporter's metrics (metrics/exposition.hpp): names, dcgm-exporter's labels, another user's command
// line made safe and bounded, one shim state per process, exited processes without series, and the
// set-to-first-launch histogram (metrics/set_latency.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "metrics/exposition.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

ProcessState process(int pid, const std::string& tpcs, const std::string& command) {
    ProcessState p;
    p.pid = pid;
    p.start_time = 1000 + static_cast<std::uint64_t>(pid);
    p.command = command;
    p.partitioned = tpcs != "all";
    if (p.partitioned) p.mask = resolve_mask(tpcs, h200()).mask;
    p.shim_word = "active";
    p.has_context = true;
    p.launches = 50;
    p.masked_launches = 40;
    p.generation = 2;
    p.written_ns = 1'000'000'000;
    p.applied_ns = 1'250'000'000;  // 0.25 s after the write
    p.writer_pid = 77;              // a gpupart set, not the process itself
    p.last_launch_ns = 9'000'000'000;
    return p;
}

SystemState state_with(std::vector<ProcessState> processes) {
    SystemState state;
    state.gpu = h200();
    state.gpu_uuid = gpu_key(h200());
    state.processes = std::move(processes);
    return state;
}

const prometheus::MetricFamily* family(const std::vector<prometheus::MetricFamily>& all, const std::string& name) {
    for (const auto& f : all)
        if (f.name == name) return &f;
    return nullptr;
}

std::string label(const prometheus::ClientMetric& metric, const std::string& name) {
    for (const auto& l : metric.label)
        if (l.name == name) return l.value;
    return "(none)";
}

}  // namespace

TEST(Exposition, PerGpuAndPerProcessSeriesWithDcgmLabels) {
    const SystemState state = state_with({process(11, "gpc0-1", "python3 serve.py"), process(12, "gpc1-2", "train"),
                                          process(13, "all", "other")});
    SetLatency latency;
    latency.observe(state);
    const auto families = gpupart_metrics({state}, latency, {"node7", 10'000'000'000});
    const auto* owned = family(families, "gpupart_gpu_tpcs_owned");
    ASSERT_NE(owned, nullptr);
    EXPECT_EQ(owned->metric.at(0).gauge.value, (resolve_mask("gpc0-2", h200()).mask & real_tpcs(h200())).count());
    const auto* shared = family(families, "gpupart_gpu_tpcs_shared");
    EXPECT_EQ(shared->metric.at(0).gauge.value, (resolve_mask("gpc1", h200()).mask & real_tpcs(h200())).count());
    for (const char* name : {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "hostname"})
        EXPECT_NE(label(owned->metric.at(0), name), "(none)") << name;
    EXPECT_EQ(label(owned->metric.at(0), "Hostname"), "node7");
    EXPECT_EQ(label(owned->metric.at(0), "UUID"), gpu_key(h200()));
    const auto* tpcs = family(families, "gpupart_tpcs_owned");
    ASSERT_EQ(tpcs->metric.size(), 3u);
    EXPECT_EQ(tpcs->metric[2].gauge.value, real_tpcs(h200()).count());  // not partitioned: every real TPC
    const auto* launches = family(families, "gpupart_launches_total");
    EXPECT_EQ(launches->type, prometheus::MetricType::Counter);
    EXPECT_EQ(launches->metric[0].counter.value, 50);
    const auto* since = family(families, "gpupart_seconds_since_last_launch");
    EXPECT_DOUBLE_EQ(since->metric[0].gauge.value, 1.0);
    // One shim state is 1 per process, the others 0.
    const auto* states = family(families, "gpupart_shim_state");
    double ones = 0;
    for (const auto& m : states->metric) ones += m.gauge.value;
    EXPECT_EQ(ones, 3);
    EXPECT_EQ(states->metric.size(), 3u * 8u);
}

TEST(Exposition, AnotherUsersCommandLineIsOneBoundedEscapedLine) {
    const std::string hostile = "evil \x1b]0;PWNED\a\"quoted\"\nsecond line " + std::string(500, 'x');
    const auto families = gpupart_metrics({state_with({process(11, "gpc0", hostile)})}, SetLatency{}, {"h", 0});
    const std::string command = label(family(families, "gpupart_tpcs_owned")->metric.at(0), "command");
    EXPECT_LE(command.size(), kCommandLabelChars + 8);  // the limit, and "..." where it was cut
    EXPECT_EQ(command.find('\x1b'), std::string::npos);
    EXPECT_EQ(command.find('\n'), std::string::npos);
    const std::string text = exposition_text(families);
    // The exposition quotes label values: a quote or newline inside one cannot end it or the line.
    EXPECT_EQ(text.find("\"quoted\""), std::string::npos);
    EXPECT_NE(text.find("\\\"quoted\\\""), std::string::npos);
    for (std::size_t line = 0, next; line < text.size(); line = next + 1) {
        next = text.find('\n', line);
        const std::string one = text.substr(line, next - line);
        EXPECT_TRUE(one.empty() || one[0] == '#' || one.rfind("gpupart_", 0) == 0) << one;
    }
}

// Per-process series name the scheduler job step of the process (hpc_job, as dcgm-exporter), "" for none;
// never "job", which Prometheus gives the scrape job.
TEST(Exposition, PerProcessSeriesNameTheSchedulerJob) {
    ProcessState in_job = process(11, "gpc0", "a");
    in_job.job = "slurm:12.0";
    const auto families = gpupart_metrics({state_with({in_job, process(12, "gpc1", "b")})}, SetLatency{}, {"h", 0});
    for (const char* name : {"gpupart_tpcs_owned", "gpupart_shim_state", "gpupart_launches_total"}) {
        const auto* f = family(families, name);
        ASSERT_NE(f, nullptr) << name;
        for (const auto& metric : f->metric) {
            EXPECT_EQ(label(metric, "hpc_job"), label(metric, "pid") == "11" ? "slurm:12.0" : "") << name;
            EXPECT_EQ(label(metric, "job"), "(none)") << name;
        }
    }
}

TEST(Exposition, AnExitedProcessHasNoSeries) {
    SetLatency latency;
    const auto before = gpupart_metrics({state_with({process(11, "gpc0", "a"), process(12, "gpc1", "b")})}, latency, {"h", 0});
    const auto after = gpupart_metrics({state_with({process(12, "gpc1", "b")})}, latency, {"h", 0});
    EXPECT_EQ(family(before, "gpupart_tpcs_owned")->metric.size(), 2u);
    ASSERT_EQ(family(after, "gpupart_tpcs_owned")->metric.size(), 1u);
    EXPECT_EQ(label(family(after, "gpupart_tpcs_owned")->metric[0], "pid"), "12");
}

TEST(SetLatencyTest, EachAppliedChangeIsObservedOnceAndOwnRegistrationNever) {
    SetLatency latency;
    ProcessState p = process(11, "gpc0", "a");
    ProcessState own = process(12, "gpc1", "b");
    own.writer_pid = own.pid;  // the process's start mask, written by itself: no `set`
    latency.observe(state_with({p, own}));
    latency.observe(state_with({p, own}));  // the same change, seen again
    auto h = latency.histogram(gpu_key(h200()));
    EXPECT_EQ(h.total, 1u);
    EXPECT_DOUBLE_EQ(h.sum_seconds, 0.25);
    const auto bucket = std::lower_bound(SetLatency::bounds().begin(), SetLatency::bounds().end(), 0.25) - SetLatency::bounds().begin();
    EXPECT_EQ(h.counts[static_cast<std::size_t>(bucket)], 1u);
    p.pending = true;  // a newer change, not applied yet: nothing to observe
    p.generation = 3;
    latency.observe(state_with({p}));
    EXPECT_EQ(latency.histogram(gpu_key(h200())).total, 1u);
    p.pending = false;
    p.applied_ns = p.written_ns = 5'000'000'000;
    latency.observe(state_with({p}));
    EXPECT_EQ(latency.histogram(gpu_key(h200())).total, 2u);
    // In the exposition: cumulative buckets ending at +Inf with the count.
    const auto families = gpupart_metrics({state_with({p})}, latency, {"h", 0});
    const auto& hist = family(families, "gpupart_set_to_first_launch_seconds")->metric.at(0).histogram;
    EXPECT_EQ(hist.sample_count, 2u);
    EXPECT_EQ(hist.bucket.back().cumulative_count, 2u);
    EXPECT_TRUE(std::isinf(hist.bucket.back().upper_bound));
}
