#include "metrics/exposition.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include <prometheus/text_serializer.h>

#include "controller/rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/mps_control.hpp"
#include "platform/user_names.hpp"

namespace gpupart {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Families by name, each created on first use with its help text and type, kept in first-use order.
class Families {
public:
    MetricFamily& family(const std::string& name, const std::string& help, MetricType type) {
        if (const auto it = index_.find(name); it != index_.end()) return families_[it->second];
        index_.emplace(name, families_.size());
        families_.push_back(MetricFamily{name, help, type, {}});
        return families_.back();
    }
    void gauge(const std::string& name, const std::string& help, const Labels& labels, double value) {
        ClientMetric metric;
        metric.label = labels;
        metric.gauge.value = value;
        family(name, help, MetricType::Gauge).metric.push_back(std::move(metric));
    }
    void counter(const std::string& name, const std::string& help, const Labels& labels, double value) {
        ClientMetric metric;
        metric.label = labels;
        metric.counter.value = value;
        family(name, help, MetricType::Counter).metric.push_back(std::move(metric));
    }
    std::vector<MetricFamily> take() { return std::move(families_); }

private:
    std::vector<MetricFamily> families_;
    std::map<std::string, std::size_t> index_;
};

Labels with(Labels labels, std::initializer_list<ClientMetric::Label> more) {
    labels.insert(labels.end(), more);
    return labels;
}

// dcgm-exporter's labels, so that gpupart's series join DCGM's on UUID (or gpu + Hostname).
Labels gpu_labels(const SystemState& state, const std::string& hostname) {
    const Gpu& gpu = state.gpu;
    return {{"gpu", std::to_string(gpu.index)},
            {"UUID", state.gpu_uuid},
            {"pci_bus_id", valid_utf8(gpu.pci_bus_id.value.value_or(""))},
            {"device", "nvidia" + std::to_string(gpu.index)},
            {"modelName", valid_utf8(gpu.name.value.value_or(""))},
            {"Hostname", hostname},
            {"hostname", hostname}};
}

// Another user's command line: one line (control characters escaped, valid UTF-8), at most
// kCommandLabelChars characters.
std::string command_label(const std::string& command) { return one_line(command, kCommandLabelChars); }

// The shim's state word as a label value (ProcessState::shim_word, with '_' for spaces).
std::string state_label(std::string word) {
    std::replace(word.begin(), word.end(), ' ', '_');
    return word;
}

const std::vector<std::string>& shim_states() {
    static const std::vector<std::string> states = {"waiting", "active", "pending", "passthru",
                                                    "refused", "bad_env", "unconfined", "unknown_gpu"};
    return states;
}

void gpu_metrics(Families& out, const SystemState& state, const Labels& labels) {
    const TpcMask real = real_tpcs(state.gpu);
    TpcMask owned, shared;
    int partitioned = 0;
    for (const ProcessState& p : state.processes) {
        if (!p.partitioned) continue;
        ++partitioned;
        shared |= owned & p.mask;
        owned |= p.mask;
    }
    owned &= real;
    shared &= real;
    out.gauge("gpupart_gpu_tpcs", "Real TPCs of the GPU", labels, real.count());
    out.gauge("gpupart_gpu_tpcs_owned", "TPCs given to at least one partitioned process", labels, owned.count());
    out.gauge("gpupart_gpu_tpcs_free", "TPCs given to no partitioned process", labels, (real & ~owned).count());
    out.gauge("gpupart_gpu_tpcs_shared", "TPCs given to more than one partitioned process", labels, shared.count());
    out.gauge("gpupart_gpu_holes", "Launch-mask bits that are not TPCs (floorswept or beyond the GPU)", labels,
              hole_bits(state.gpu).count());
    out.gauge("gpupart_gpu_processes", "Registered live processes on the GPU (or on no GPU yet)", labels,
              static_cast<double>(state.processes.size()));
    out.gauge("gpupart_gpu_processes_partitioned", "Processes with a TPC mask on the GPU", labels, partitioned);
    out.gauge("gpupart_gpu_processes_unconfined",
              "Processes using the GPU (driver or NVML) with no gpupart slot: they run on every TPC", labels,
              static_cast<double>(state.unconfined.size()));
    out.gauge("gpupart_gpu_processes_job_step_gone",
              "Processes of a scheduler job step that ended (its slurmstepd is gone) still running", labels,
              static_cast<double>(std::count_if(state.processes.begin(), state.processes.end(),
                                                [](const ProcessState& p) { return p.job_step_gone; })));
    out.gauge("gpupart_mps_running", "1 when an MPS control daemon serves the GPU", labels, state.mps_running ? 1 : 0);
    if (state.mps_running) {
        // Its clients, from the daemon itself (NVML counts an MPS client's work as the server's). A daemon
        // that does not answer leaves the series out for this scrape rather than reporting 0 clients.
        try {
            MpsState mps;  // the daemon and servers gather_state found: asked for their clients only
            mps.pipe_directory = state.mps_pipe_directory;
            mps.control_running = true;
            mps.server_pids = state.mps_server_pids;
            std::size_t clients = 0;
            for (const auto& [server, pids] : mps_clients(mps)) clients += pids.size();
            out.gauge("gpupart_mps_clients", "Clients of the MPS servers of the GPU's daemon", labels, static_cast<double>(clients));
        } catch (const UserError&) {
        }
    }
    std::map<std::pair<std::string, std::string>, int> findings;
    for (const Finding& finding : every_result_finding(state)) ++findings[{std::string(to_string(finding.severity)), finding.id}];
    for (const auto& [key, count] : findings)
        out.gauge("gpupart_findings", "The controller's findings about the GPU's partitions (gpupart check), by severity and id",
                  with(labels, {{"severity", key.first}, {"id", key.second}}), count);
}

void process_metrics(Families& out, const SystemState& state, const ProcessState& p, const Labels& gpu, std::uint64_t now_ns) {
    const TpcMask real = real_tpcs(state.gpu);
    const TpcMask held = p.partitioned ? p.mask & real : real;
    // hpc_job: the scheduler job step the process runs in, as registered ($GPUPART_JOB, "slurm:12.0"; "" for
    // none), named as dcgm-exporter names its job label. Not "job": Prometheus sets that one to the scrape job.
    const Labels labels = with(gpu, {{"pid", std::to_string(p.pid)}, {"user", one_line(user_name(p.uid), 64)},
                                     {"command", command_label(p.command)}, {"hpc_job", one_line(p.job, 64)}});
    out.gauge("gpupart_tpcs_owned", "TPCs the process may use on the GPU (every real TPC when not partitioned)", labels,
              held.count());
    out.gauge("gpupart_sms_owned", "SMs of those TPCs", labels, static_cast<double>(sms_of(state.gpu, held).size()));
    out.gauge("gpupart_gpu_share_ratio", "Share of the GPU's real TPCs the process may use (0..1)", labels,
              real.count() > 0 ? static_cast<double>(held.count()) / real.count() : 0.0);
    out.gauge("gpupart_partitioned", "1 when the process has a TPC mask on the GPU", labels, p.partitioned ? 1 : 0);
    out.counter("gpupart_launches_total", "Kernel launches of the process on the GPU", labels, static_cast<double>(p.launches));
    out.counter("gpupart_masked_launches_total", "Launches on the GPU into which the shim wrote the mask", labels,
                static_cast<double>(p.masked_launches));
    out.counter("gpupart_graph_launches_total", "CUDA graph launches of the process (all its GPUs)", labels,
                static_cast<double>(p.graph_launches));
    out.counter("gpupart_refused_masks_total", "Mask changes the shim refused (no real TPC; all its GPUs)", labels,
                static_cast<double>(p.refused_masks));
    const std::string current = state_label(p.shim_word);
    for (const std::string& s : shim_states())
        out.gauge("gpupart_shim_state", "1 for the state of the process's shim on the GPU (passthru, refused, bad_env, "
                  "unconfined and unknown_gpu: the mask is not applied as asked)", with(labels, {{"state", s}}),
                  s == current ? 1 : 0);
    out.gauge("gpupart_graph_execs", "CUDA graph execs carrying the current mask, an older one, or that cannot follow",
              with(labels, {{"state", "current"}}), static_cast<double>(p.graphs.current));
    out.gauge("gpupart_graph_execs", "", with(labels, {{"state", "older"}}), static_cast<double>(p.graphs.older));
    out.gauge("gpupart_graph_execs", "", with(labels, {{"state", "unfollowable"}}), static_cast<double>(p.graphs.unfollowable));
    out.gauge("gpupart_change_pending", "1 while a changed mask waits for the process's next launch on the GPU", labels,
              p.pending ? 1 : 0);
    if (p.last_launch_ns > 0)
        out.gauge("gpupart_seconds_since_last_launch", "Seconds since the process's last kernel launch", labels,
                  now_ns > p.last_launch_ns ? static_cast<double>(now_ns - p.last_launch_ns) / 1e9 : 0.0);
}

void latency_metrics(Families& out, const SetLatency::Histogram& h, const Labels& labels) {
    ClientMetric metric;
    metric.label = labels;
    metric.histogram.sample_count = h.total;
    metric.histogram.sample_sum = h.sum_seconds;
    std::uint64_t cumulative = 0;
    const auto& bounds = SetLatency::bounds();
    for (std::size_t i = 0; i <= bounds.size(); ++i) {
        cumulative += h.counts[i];
        metric.histogram.bucket.push_back({cumulative, i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity()});
    }
    out.family("gpupart_set_to_first_launch_seconds",
               "Time from a gpupart set (the control block written) to the process's first launch that applied it",
               MetricType::Histogram)
        .metric.push_back(std::move(metric));
}

}  // namespace

std::vector<MetricFamily> gpupart_metrics(const std::vector<SystemState>& gpus, const SetLatency& latency,
                                          const ExpositionContext& context) {
    Families out;
    for (const SystemState& state : gpus) {
        const Labels labels = gpu_labels(state, context.hostname);
        gpu_metrics(out, state, labels);
        for (const ProcessState& p : state.processes) process_metrics(out, state, p, labels, context.now_ns);
        latency_metrics(out, latency.histogram(state.gpu_uuid), labels);
    }
    return out.take();
}

std::string exposition_text(const std::vector<MetricFamily>& families) {
    return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gpupart
