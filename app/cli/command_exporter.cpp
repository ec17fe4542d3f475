// gpupart exporter: gpupart's facts as Prometheus metrics (docs/metrics.md), over HTTP for Prometheus
// and/or as an atomically replaced file for node_exporter's textfile collector. Every scrape (and every
// textfile write) reads the registry once and builds the metrics of every GPU of the snapshot afresh, so
// an exited process has no series. It reads the registry, the snapshot and MPS; it writes nothing but the
// textfile.
#include <csignal>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>

#include <unistd.h>

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "metrics/exposition.hpp"
#include "model/user_error.hpp"
#include "platform/safe_file.hpp"

namespace gpupart::cli {
namespace {

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string host_name() {
    char name[256] = "";
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return valid_utf8(name);
}

// One scrape's worth of metrics. Collect() may be called from the HTTP server's threads and the textfile
// loop at once: the latency histogram it keeps is shared, so scrapes take turns.
class GpupartCollector : public prometheus::Collectable {
public:
    GpupartCollector(std::vector<Gpu> gpus, std::string hostname) : gpus_(std::move(gpus)), hostname_(std::move(hostname)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto started = std::chrono::steady_clock::now();
        std::vector<prometheus::MetricFamily> families;
        std::vector<SystemState> states;
        try {
            const Registry registry(Registry::default_directory(), gpus_);
            const auto entries = registry.list();  // one read for every GPU
            for (const Gpu& gpu : gpus_) {
                states.push_back(gather_state(entries, gpu));
                gather_jobs(states.back(), registry.directory(), entries);
                latency_.observe(states.back());
            }
            families = gpupart_metrics(states, latency_, ExpositionContext{hostname_, realtime_ns()});
            last_error_.clear();
        } catch (const std::exception& error) {
            // An unusable registry is a value on the page, not a dead exporter (the alert rules see it).
            last_error_ = one_line(error.what());
        }
        std::size_t processes = 0;
        for (const SystemState& state : states) processes += state.processes.size();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        families.push_back(gauge("gpupart_exporter_scrape_duration_seconds", "Time this scrape took to read the registry "
                                 "and build the metrics", seconds));
        families.push_back(gauge("gpupart_exporter_processes", "Process-on-GPU entries exported by this scrape",
                                 static_cast<double>(processes)));
        families.push_back(gauge("gpupart_exporter_registry_ok", "0 when the registry could not be read (see the log)",
                                 last_error_.empty() ? 1 : 0));
        if (!last_error_.empty() && last_error_ != reported_error_) {
            fmt::print(stderr, "gpupart exporter: {}\n", last_error_);
            reported_error_ = last_error_;
        }
        return families;
    }

private:
    prometheus::MetricFamily gauge(const std::string& name, const std::string& help, double value) const {
        prometheus::ClientMetric metric;
        metric.label = {{"Hostname", hostname_}, {"hostname", hostname_}};
        metric.gauge.value = value;
        return prometheus::MetricFamily{name, help, prometheus::MetricType::Gauge, {metric}};
    }

    std::vector<Gpu> gpus_;
    std::string hostname_;
    mutable std::mutex mutex_;
    mutable SetLatency latency_;
    mutable std::string last_error_;
    mutable std::string reported_error_;
};

// Waits up to `seconds` for SIGTERM or SIGINT (blocked in every thread, so the HTTP threads never get
// them); true when one came.
bool wait_for_stop(const sigset_t& stop, double seconds) {
    timespec timeout{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
    return ::sigtimedwait(&stop, nullptr, &timeout) > 0;
}

}  // namespace

Command add_exporter_command(CLI::App& app) {
    struct ExporterOptions {
        SnapshotOptions snapshot;
        std::string listen;
        std::string textfile;
        double interval = 15;
        bool once = false;
        // civetweb serves one connection per thread and waits for a request's bytes up to its request timeout:
        // with prometheus-cpp's defaults (2 threads, 30 s) two idle connections keep every scrape out. Enough
        // threads for a few stuck clients and a timeout well under Prometheus's 10 s scrape timeout bound what
        // a local user who opens connections and sends nothing (or half a request) can hold up.
        int http_threads = 32;
        int http_timeout_ms = 3000;
    };
    auto options = std::make_shared<ExporterOptions>();
    CLI::App* exporter = app.add_subcommand("exporter", "Prometheus metrics of every GPU's partitions and processes "
                                                        "(docs/metrics.md)");
    exporter->add_option("--listen", options->listen, "Serve /metrics over HTTP on ADDR:PORT (e.g. 127.0.0.1:9842)");
    exporter->add_option("--textfile", options->textfile, "Write the metrics to this file (replaced atomically), for "
                                                         "node_exporter's textfile collector");
    exporter->add_option("--interval", options->interval, "With --textfile: seconds between writes")->check(CLI::Range(1.0, 3600.0));
    exporter->add_option("--http-threads", options->http_threads, "With --listen: connections served at once (each "
                                                                  "idle or slow client holds one until the timeout)")
        ->check(CLI::Range(4, 1024));
    exporter->add_option("--http-timeout-ms", options->http_timeout_ms, "With --listen: milliseconds a client has to "
                                                                        "send its whole request (and to take the answer)")
        ->check(CLI::Range(100, 60000));
    exporter->add_flag("--once", options->once, "Write the metrics once (to --textfile, else to stdout) and exit");
    add_snapshot_options(*exporter, options->snapshot);
    return {exporter, [options] {
                if (options->listen.empty() && options->textfile.empty() && !options->once)
                    throw UserError("gpupart exporter: say where the metrics go: --listen ADDR:PORT, --textfile PATH, or --once");
                if (options->once && !options->listen.empty())
                    throw UserError("gpupart exporter: --once writes once; it does not serve --listen");
                if (!options->snapshot.gpu.empty())
                    throw UserError("gpupart exporter: it exports every GPU of the snapshot; --gpu does not apply");
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                auto collector = std::make_shared<GpupartCollector>(chosen.snapshot.gpus, host_name());
                const auto write_textfile = [&] {
                    replace_file(options->textfile, exposition_text(collector->Collect()), 0644, "metrics textfile");
                };
                if (options->once) {
                    if (options->textfile.empty()) fmt::print("{}", exposition_text(collector->Collect()));
                    else write_textfile();
                    return 0;
                }
                sigset_t stop;
                sigemptyset(&stop);
                sigaddset(&stop, SIGTERM);
                sigaddset(&stop, SIGINT);
                pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the HTTP server starts its threads
                std::unique_ptr<prometheus::Exposer> exposer;
                if (!options->listen.empty()) {
                    try {
                        const std::string timeout = std::to_string(options->http_timeout_ms);
                        exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
                            "listening_ports", options->listen, "num_threads", std::to_string(options->http_threads),
                            "request_timeout_ms", timeout, "enable_keep_alive", "no"});
                    } catch (const std::exception& error) {
                        throw UserError(fmt::format("gpupart exporter: cannot listen on {}: {}", one_line(options->listen),
                                                    one_line(error.what())));
                    }
                    exposer->RegisterCollectable(collector);
                    fmt::print(stderr, "gpupart exporter: serving http://{}/metrics ({} GPU{} of {})\n", options->listen,
                               chosen.snapshot.gpus.size(), chosen.snapshot.gpus.size() == 1 ? "" : "s", chosen.origin);
                }
                for (;;) {
                    if (!options->textfile.empty()) {
                        try {
                            write_textfile();
                        } catch (const UserError& error) {  // a full disk must not stop the HTTP side
                            fmt::print(stderr, "gpupart exporter: {}\n", one_line(error.what()));
                        }
                    }
                    if (wait_for_stop(stop, options->textfile.empty() ? 3600.0 : options->interval)) return 0;
                }
            }};
}

}  // namespace gpupart::cli
