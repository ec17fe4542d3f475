#pragma once
// One frame of `gpupart top` as a grid of cells, each a character with a colour role and emphasis,
// plus the regions a mouse click may hit. The layout fills it; the curses view paints it; batch mode
// and the tests read it as text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart::top {

enum class SortKey;  // top_ui_state.hpp: the table's columns as sort keys

// What a cell means; the curses view maps each role to a colour pair (or to plain attributes with -C).
enum class Role : std::uint8_t {
    normal, dim, title, label, value, good, bad,
    hole, free_tpc, overlap, owner0, owner1, owner2, owner3, owner4, owner5,
    table_header, sorted_header, row_selected, tagged,
    finding_error, finding_warning, finding_info,
    footer_key, footer_label, message_ok, message_error,
    box, box_title, menu_selected, menu_disabled, input, filter_marker,
};
Role owner_role(int colour);

struct Cell {
    char32_t ch = U' ';
    Role role = Role::normal;
    bool bold = false;
    bool reverse = false;
    bool underline = false;
    bool operator==(const Cell&) const = default;
};

struct Style {
    Role role = Role::normal;
    bool bold = false;
    bool reverse = false;
    bool underline = false;
};

// Where a mouse click lands: a TPC (value = mask bit), a process row (value = pid), a footer key
// (value = the key's code, see top_input.hpp), a menu item (value = its index) or a column title of the
// table (value = its SortKey: a click sorts by it, as in htop).
enum class HitKind { tpc, process, key, menu_item, sort_column };
struct Hit {
    int row = 0;
    int column = 0;
    int width = 0;
    HitKind kind = HitKind::tpc;
    int value = 0;
};

class Screen {
public:
    Screen(int width, int height, bool ascii = false);
    int width() const { return width_; }
    int height() const { return height_; }
    const Cell& at(int row, int column) const;

    // Writes UTF-8 `text` from (row, column), clipped at `limit` columns (and the screen's edge);
    // returns the column after the last cell written.
    int put(int row, int column, std::string_view text, Style style = {}, int limit = -1);
    void fill(int row, int column, int count, char32_t ch, Style style);
    void style_row(int row, Style style);  // every cell of `row` takes `style` (keeps its character)
    void restyle(int row, int column, int count, Style style);

    // The frame as text, one line per row with trailing blanks trimmed.
    std::string text() const;
    std::string row_text(int row) const;

    std::vector<Hit> hits;
    const Hit* hit_at(int row, int column) const;

    // What the layout decided that the key handler must remember.
    int table_first_row = 0;
    int table_rows = 0;
    int hidden_rows = 0;                // rows of processes and findings this frame had no room for (--batch grows to show them)
    int findings_lines = 0;             // the findings view (f): its wrapped lines, how many it showed, from which
    int findings_rows = 0;
    int findings_first_line = 0;
    std::vector<SortKey> table_columns;  // the sort keys of the columns shown, left to right (< > and F6 offer these)

private:
    int width_;
    int height_;
    bool ascii_;
    std::vector<Cell> cells_;
};

// Decodes UTF-8 into code points (invalid bytes become U+FFFD).
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(char32_t ch);
// The display width of UTF-8 text in cells (every code point one cell: the layout uses no wide glyphs).
int text_width(std::string_view text);
// The plain-ASCII stand-in of a glyph, for terminals whose locale is not UTF-8.
char32_t ascii_glyph(char32_t ch);

}  // namespace gpupart::top
