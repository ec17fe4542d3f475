#pragma once
// One `gpupart top` session without its terminal: it samples the registry through the controller,
// lays frames out, and carries out what keys ask for (plans, confirmations, applies, undo), always
// through the controller. The curses view and batch mode drive it; the tests drive it directly.
#include <optional>
#include <set>
#include <utility>

#include "controller/controller.hpp"
#include "controller/interference.hpp"
#include "top/top_data.hpp"
#include "top/top_input.hpp"
#include "top/top_layout.hpp"
#include "top/top_scaling.hpp"

namespace gpupart::top {

class TopSession {
public:
    // `gpus`: every GPU of the snapshot, for the key that switches GPUs (empty: only the controller's).
    TopSession(Controller controller, Registry registry, TopSource source, Settings settings, std::vector<Gpu> gpus = {});

    void refresh();                             // a new sample of the registry and MPS; a failure keeps the last
                                                // one and shows why on the message line
    Screen frame(int width, int height);        // lays out the current sample and remembers the frame
    bool handle(const Key& key);                // false when the user quits
    bool take_repaint() { return std::exchange(repaint_, false); }  // Ctrl-L asked for a whole repaint

    const TopData& data() const { return data_; }
    const UiState& ui() const { return ui_; }
    void set_batch(bool batch) { ui_.batch = batch; }  // frames for a file: no cursor, status line or keys
    void set_sort(SortKey key, bool descending) {      // as toprc or --sort chose it
        ui_.sort = key;
        ui_.sort_descending = descending;
    }
    void say(std::string message, bool error) {        // on the message line until the next key (a toprc warning)
        ui_.message = std::move(message);
        ui_.message_is_error = error;
    }

private:
    void sample();  // refresh's work; throws
    std::string registry_problem();
    void carry_out(const Intent& intent);
    void propose(Plan plan, std::string title);
    std::string process_name(int pid) const;
    std::vector<int> shown_pids() const;  // the table's processes in its order now
    void keep_selection(const std::vector<int>& order_before, int selected_pid);
    void next_gpu();

    Controller controller_;
    Registry registry_;
    TopSource source_;
    LaunchRates rates_{kTopRateWindow};
    OwnerLetters letters_;  // each process keeps its letter for its life
    GpuMeterReader meters_;  // NVML, loaded once: the header's meters and each process's GPU memory
    InterferenceWatch interference_;  // a partition slowed while a neighbour sped up: a finding
    ProcessUsageSampler usage_{"/proc", kTopRateWindow};  // CPU% and RSS from /proc (a key's refresh keeps the last CPU%)
    ScalingClasses scaling_;           // each process's saved scaling curve (gpupart measure)
    TopData data_;
    UiState ui_;
    Screen last_{0, 0};
    std::string refresh_error_;  // what the last failed refresh put on the message line
    bool registry_seen_ = false; // the registry directory existed at some sample: its removal is said
    std::vector<Gpu> gpus_;      // the snapshot's GPUs ('G' cycles through them)
    bool repaint_ = false;       // Ctrl-L: the terminal repaints every cell
    std::string exit_notice_;    // the last "K exited" message, and the letters it names (held back from newcomers
    std::set<std::size_t> exit_notice_letters_;  // while it is on the message line)
};

}  // namespace gpupart::top
