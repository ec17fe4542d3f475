#include "top/top_screen.hpp"

#include <algorithm>

#include "model/user_error.hpp"

namespace gpupart::top {

Role owner_role(int colour) {
    static constexpr Role roles[] = {Role::owner0, Role::owner1, Role::owner2, Role::owner3, Role::owner4, Role::owner5};
    return roles[static_cast<std::size_t>(colour) % std::size(roles)];
}

std::u32string decode_utf8(std::string_view text) {
    std::u32string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        int extra = byte < 0x80 ? 0 : (byte >> 5) == 0x6 ? 1 : (byte >> 4) == 0xe ? 2 : (byte >> 3) == 0x1e ? 3 : -1;
        if (extra < 0 || i + static_cast<std::size_t>(extra) >= text.size()) {
            out.push_back(U'\uFFFD');
            ++i;
            continue;
        }
        char32_t ch = extra == 0 ? byte : byte & (0x3f >> extra);
        bool valid = true;
        for (int k = 1; k <= extra; ++k) {
            const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
            valid = valid && (next & 0xc0) == 0x80;
            ch = (ch << 6) | (next & 0x3f);
        }
        out.push_back(valid ? ch : U'\uFFFD');
        i += valid ? static_cast<std::size_t>(extra) + 1 : 1;
    }
    return out;
}

std::string encode_utf8(char32_t ch) {
    std::string out;
    if (ch < 0x80) {
        out += static_cast<char>(ch);
    } else if (ch < 0x800) {
        out += static_cast<char>(0xc0 | (ch >> 6));
        out += static_cast<char>(0x80 | (ch & 0x3f));
    } else if (ch < 0x10000) {
        out += static_cast<char>(0xe0 | (ch >> 12));
        out += static_cast<char>(0x80 | ((ch >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (ch & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (ch >> 18));
        out += static_cast<char>(0x80 | ((ch >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((ch >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (ch & 0x3f));
    }
    return out;
}

int text_width(std::string_view text) { return static_cast<int>(decode_utf8(text).size()); }

char32_t ascii_glyph(char32_t ch) {
    switch (ch) {
        case U'·': return U'-';
        case U'─': case U'━': return U'-';
        case U'│': return U'|';
        case U'┌': case U'┐': case U'└': case U'┘': case U'├': case U'┤': return U'+';
        case U'▸': case U'→': return U'>';
        case U'↓': return U'v';
        case U'↑': return U'^';
        case U'…': return U'~';
        case U'✓': return U'v';
        default: return ch < 0x80 ? ch : U'?';
    }
}

Screen::Screen(int width, int height, bool ascii)
    : width_(std::max(width, 0)), height_(std::max(height, 0)), ascii_(ascii),
      cells_(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_)) {}

const Cell& Screen::at(int row, int column) const {
    return cells_[static_cast<std::size_t>(row) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(column)];
}

int Screen::put(int row, int column, std::string_view text, Style style, int limit) {
    if (row < 0 || row >= height_) return column;
    const int end = limit < 0 ? width_ : std::min(width_, column + limit);
    // The last line of defence: no control byte reaches the terminal, whatever a section passes.
    for (char32_t ch : decode_utf8(one_line(text))) {
        if (column >= end) break;
        if (column >= 0) {
            Cell& cell = cells_[static_cast<std::size_t>(row) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(column)];
            cell = Cell{ascii_ ? ascii_glyph(ch) : ch, style.role, style.bold, style.reverse, style.underline};
        }
        ++column;
    }
    return column;
}

void Screen::fill(int row, int column, int count, char32_t ch, Style style) {
    for (int i = 0; i < count; ++i) put(row, column + i, encode_utf8(ch), style);
}

void Screen::restyle(int row, int column, int count, Style style) {
    if (row < 0 || row >= height_) return;
    for (int c = std::max(column, 0); c < std::min(width_, column + count); ++c) {
        Cell& cell = cells_[static_cast<std::size_t>(row) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(c)];
        cell.role = style.role;
        cell.bold = style.bold;
        cell.reverse = style.reverse;
        cell.underline = style.underline;
    }
}

void Screen::style_row(int row, Style style) { restyle(row, 0, width_, style); }

std::string Screen::row_text(int row) const {
    std::string line;
    int last = width_ - 1;
    while (last >= 0 && at(row, last).ch == U' ') --last;
    for (int c = 0; c <= last; ++c) line += encode_utf8(at(row, c).ch);
    return line;
}

std::string Screen::text() const {
    std::string out;
    for (int r = 0; r < height_; ++r) out += row_text(r) + "\n";
    return out;
}

const Hit* Screen::hit_at(int row, int column) const {
    // Later hits are drawn over earlier ones (dialogs over the table): the last match wins.
    for (auto it = hits.rbegin(); it != hits.rend(); ++it)
        if (it->row == row && column >= it->column && column < it->column + it->width) return &*it;
    return nullptr;
}

}  // namespace gpupart::top
