#pragma once
// A key press or mouse click as `gpupart top` understands it, independent of curses: the curses view
// translates its key codes into these, and the tests send them directly.
namespace gpupart::top {

enum class KeyCode {
    none, character, up, down, left, right, page_up, page_down, home, end, enter, escape, tab, back_tab,
    backspace, del, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, resize, mouse,
};

struct Key {
    KeyCode code = KeyCode::none;
    char32_t ch = 0;  // KeyCode::character
    int row = 0;      // KeyCode::mouse: the cell clicked
    int column = 0;
};

inline Key char_key(char32_t ch) { return {KeyCode::character, ch}; }
inline Key code_key(KeyCode code) { return {code}; }
inline Key click(int row, int column) { return {KeyCode::mouse, 0, row, column}; }

}  // namespace gpupart::top
