#pragma once
// Keys pressed over a `gpupart top` frame in the input tests, laid out again after each one as the view does.
#include <utility>

#include "top/top_input.hpp"
#include "top/top_key.hpp"
#include "top/top_layout.hpp"
#include "top_test_data.hpp"

namespace gpupart::top::test {

// A session's worth of UI state over the demo frame, laying out after every key as the view does.
struct Keys {
    TopData data = frame_data(demo_processes());
    UiState ui;
    Screen last = layout_top(data, ui, 120, 40);
    Intent press(const Key& key) {
        const Intent intent = handle_key(ui, data, last, key);
        last = layout_top(data, ui, 120, 40);
        return intent;
    }
    Intent press(char32_t ch) { return press(char_key(ch)); }
    Intent press(KeyCode code) { return press(code_key(code)); }
};

// The same over another frame.
inline Keys keys_over(TopData data) {
    Keys keys;
    keys.data = std::move(data);
    keys.last = layout_top(keys.data, keys.ui, 120, 40);
    return keys;
}

}  // namespace gpupart::top::test
