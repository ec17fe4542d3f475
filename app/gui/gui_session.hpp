#pragma once
// What the window works on: the topology shown, the controller over the registry and journal, and,
// with no GPU, the demo workload in a private registry. It plans and applies changes (through the
// controller only) and refreshes the state the views show. No widgets here.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QObject>

#include "controller/controller.hpp"
#include "platform/process_usage.hpp"
#include "platform/demo_workload.hpp"
#include "process_rows.hpp"
#include "snapshot/snapshot_choice.hpp"
#include "tpc_drag.hpp"

namespace gpupart::gui {

struct SessionOptions {
    std::optional<std::string> snapshot;  // --snapshot; default: this machine's GPU, else the demo
    std::string gpu = "0";  // an index, a UUID (or prefix) or a PCI bus id (snapshot_choice.hpp gpu_index)
    bool demo = false;                    // --demo: the simulated workload even when a snapshot is named
    int demo_workers = 4;
    bool demo_app_masks = false;          // --demo-app-masks: the second worker chooses its own masks too (libgpupart.so)
};

class GuiSession : public QObject {
    Q_OBJECT
public:
    // Throws UserError (unreadable snapshot, a GPU whose TPC map is not known, demo workers missing).
    explicit GuiSession(const SessionOptions& options, QObject* parent = nullptr);
    ~GuiSession() override;

    const ChosenSnapshot& chosen() const { return chosen_; }
    const Gpu& gpu() const { return controller_->state().gpu; }
    int gpuIndex() const { return gpu_index_; }
    void selectGpu(int index);  // another GPU of the snapshot (multi-GPU hosts)
    bool isDemo() const { return demo_; }  // the built-in H200 with a registry's processes (no GPU, or --demo)
    // With no GPU and GPUPART_REGISTRY_DIR set: that registry (shown as `gpupart top` shows it); empty otherwise.
    const std::string& namedRegistry() const { return named_registry_; }
    bool isRecording() const;   // the topology is a recording, not read from this machine
    QString title() const;      // window title: GPU, and "(recording)" / "demo"
    const std::vector<StartedWorker>& demoWorkers() const { return demo_workers_; }

    Controller& controller() { return *controller_; }
    const SystemState& state() const { return controller_->state(); }
    const std::vector<widgets::ProcessRow>& rows() const { return rows_; }
    const std::vector<Finding>& findings() const { return findings_; }


    // The controller's verdict on a drop, without applying anything.
    widgets::DropVerdict judge(const widgets::DropTarget& target, const TpcMask& tpcs) const;
    Plan planGive(const widgets::DropTarget& target, const TpcMask& tpcs) const;
    Applied apply(const Plan& plan);  // throws UserError; refreshes afterwards

public slots:
    void refresh();

signals:
    void refreshed();
    void refreshFailed(const QString& message);  // the last sample stays; the message says why

private:
    void build_controller();
    void sample();  // refresh's work; throws
    void add_usage(std::chrono::steady_clock::time_point now);

    SessionOptions options_;
    ChosenSnapshot chosen_;
    int gpu_index_ = 0;
    bool demo_ = false;
    std::string demo_dir_;       // its private registry, removed at the end; empty with a named one
    std::string named_registry_;
    std::map<std::string, std::string> saved_env_;  // what demo_dir_ replaced
    std::vector<StartedWorker> demo_workers_;
    std::unique_ptr<Controller> controller_;
    std::vector<widgets::ProcessRow> rows_;
    std::vector<Finding> findings_;
    LaunchRates launch_rates_{widgets::kRateWindow};
    // CPU% and RSS per process, read from /proc once a second (as htop's default) whatever the refresh rate:
    // a quarter-second CPU% is mostly clock-tick noise. Rows in between show the last reading.
    ProcessUsageSampler usage_;
    std::map<std::pair<int, std::uint64_t>, ProcessUsage> usage_values_;
    std::optional<std::chrono::steady_clock::time_point> usage_read_;
};

}  // namespace gpupart::gui
