#include "top/top_colours.hpp"

namespace gpupart::top {

Ansi contrast_on(Ansi background) {
    switch (background) {
        case Ansi::green: case Ansi::cyan: case Ansi::yellow: case Ansi::white: return Ansi::black;
        default: return Ansi::white;
    }
}

namespace {

Look on(Ansi background) { return {contrast_on(background), background}; }

}  // namespace

// htop's palette: green table header, cyan footer labels and selection; owners on six backgrounds.
Look role_look(Role role) {
    switch (role) {
        case Role::normal: return {};
        case Role::dim: return {Ansi::own, Ansi::own, false, true};
        case Role::title: return {Ansi::cyan, Ansi::own, true};
        case Role::label: return {Ansi::cyan};
        case Role::value: return {Ansi::own, Ansi::own, true};
        case Role::good: return {Ansi::green};
        case Role::bad: return {Ansi::red};
        case Role::hole: return {};
        case Role::free_tpc: return {Ansi::own, Ansi::own, false, true};
        case Role::overlap: return on(Ansi::red);
        case Role::owner0: return on(Ansi::green);
        case Role::owner1: return on(Ansi::cyan);
        case Role::owner2: return on(Ansi::yellow);
        case Role::owner3: return on(Ansi::magenta);
        case Role::owner4: return on(Ansi::blue);
        case Role::owner5: return on(Ansi::white);
        case Role::table_header: return on(Ansi::green);
        case Role::sorted_header: return on(Ansi::cyan);
        case Role::row_selected: return on(Ansi::cyan);
        case Role::tagged: return {Ansi::yellow};
        case Role::finding_error: return {Ansi::red};
        case Role::finding_warning: return {Ansi::yellow};
        case Role::finding_info: return {Ansi::cyan};
        case Role::footer_key: return {Ansi::own, Ansi::own, true};
        case Role::footer_label: return on(Ansi::cyan);
        case Role::message_ok: return {Ansi::green};
        case Role::message_error: return {Ansi::red};
        case Role::box: return {Ansi::cyan};
        case Role::box_title: return {Ansi::own, Ansi::own, true};
        case Role::menu_selected: return on(Ansi::cyan);
        case Role::menu_disabled: return {Ansi::own, Ansi::own, false, true};
        case Role::input: return {Ansi::yellow, Ansi::own, true};
        case Role::filter_marker: return on(Ansi::yellow);
    }
    return {};
}

Look colour_cell_look(const Cell& cell) {
    Look look = role_look(cell.role);
    look.bold = (look.bold || cell.bold) && look.background == Ansi::own;
    look.reverse = cell.reverse;
    look.underline = cell.underline;
    return look;
}

}  // namespace gpupart::top
