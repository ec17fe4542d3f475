#pragma once
// What a key press or a click does in `gpupart top`. Moving, marking, tagging, sorting, filtering and
// dialogs change the UiState here; what needs the controller (plan a change, apply it, undo) comes
// back as an Intent for the session to carry out. Pure: tested without a terminal or a registry.
#include <vector>

#include "top/top_data.hpp"
#include "top/top_key.hpp"
#include "top/top_screen.hpp"
#include "top/top_ui_state.hpp"

namespace gpupart::top {

enum class IntentKind { none, quit, give, release, grow, shrink, undo, apply, next_gpu, redraw };

struct Intent {
    IntentKind kind = IntentKind::none;
    TpcMask tpcs;           // give, release: these TPCs
    ProcessRef target;               // give: to this process (pid and start time, as the user saw it)
    std::vector<ProcessRef> targets; // grow, shrink: these processes
};

// `last` is the frame the user saw (where clicks land, how many rows a page has).
Intent handle_key(UiState& ui, const TopData& data, const Screen& last, const Key& key);

}  // namespace gpupart::top
