#pragma once
// The key handler's pieces (private to app/top): top_input.cpp handles the frame (table, floorplan, findings,
// clicks), top_input_dialogs.cpp the open dialog; these helpers are what both use.
#include <string>

#include "top/top_input.hpp"

namespace gpupart::top {

inline Intent just(IntentKind kind) {
    Intent intent;
    intent.kind = kind;
    return intent;
}

inline bool is(const Key& key, char32_t ch) { return key.code == KeyCode::character && key.ch == ch; }

inline void set_message(UiState& ui, std::string text, bool error) {
    ui.message = std::move(text);
    ui.message_is_error = error;
}

// Selects the first process after the selected one (wrapping) that matches `text`.
bool search_next(UiState& ui, const TopData& data, const std::string& text, bool include_current);

// A give of `tpcs` to the selected process, or why there is none (on the message line).
Intent give_intent(UiState& ui, const TopData& data, const TpcMask& tpcs);

// Sorts the table by `key`, numbers highest first as htop does.
void sort_by(UiState& ui, SortKey key);

// The keys of the open dialog (ui.dialog is not Dialog::none).
Intent dialog_key(UiState& ui, const TopData& data, const Screen& last, const Key& key);

}  // namespace gpupart::top
