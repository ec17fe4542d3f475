// The only file of gpupart that includes curses. Everything it shows comes from TopSession::frame; it
// adds colours, reads keys and clicks, and makes sure the terminal is restored whatever happens.
#include "top/top_curses.hpp"
#include "top/top_colours.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

namespace gpupart::top {
namespace {

// A signal only sets this flag (endwin is not async-signal-safe); the loop sees it within one input
// timeout, leaves curses in the ordinary way and reports the signal.
volatile std::sig_atomic_t g_signal = 0;
void on_signal(int signal) { g_signal = signal; }

constexpr int kInputTimeoutMs = 100;  // how soon a signal or a resize is noticed at the latest

struct SignalGuard {
    struct sigaction old_int {}, old_term {}, old_hup {};
    SignalGuard() {
        struct sigaction action {};
        action.sa_handler = on_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = 0;  // no SA_RESTART: a blocked read returns at once
        sigaction(SIGINT, &action, &old_int);
        sigaction(SIGTERM, &action, &old_term);
        sigaction(SIGHUP, &action, &old_hup);
    }
    ~SignalGuard() {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
        sigaction(SIGHUP, &old_hup, nullptr);
    }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;
};

// initscr in the constructor, endwin in the destructor: an exception leaves the terminal usable too.
struct CursesGuard {
    bool colours = false;
    CursesGuard() {
        initscr();
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        curs_set(0);
        set_escdelay(25);
        mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
        mouseinterval(0);
        if (has_colors()) {
            start_color();
            use_default_colors();
            colours = true;
        }
    }
    ~CursesGuard() { endwin(); }
    CursesGuard(const CursesGuard&) = delete;
    CursesGuard& operator=(const CursesGuard&) = delete;
};

// -C: attributes only, as htop -C (owners stay apart by their letters).
attr_t mono_attributes(Role role) {
    switch (role) {
        case Role::dim: case Role::free_tpc: case Role::menu_disabled: return A_DIM;
        case Role::title: case Role::value: case Role::bad: case Role::finding_error: case Role::message_error:
        case Role::footer_key: case Role::box_title: case Role::input: return A_BOLD;
        case Role::overlap: return A_REVERSE | A_BOLD;
        case Role::table_header: case Role::row_selected: case Role::footer_label: case Role::menu_selected: return A_REVERSE;
        case Role::sorted_header: case Role::filter_marker: return A_REVERSE | A_BOLD;
        default: return A_NORMAL;
    }
}

constexpr int kRoleCount = static_cast<int>(Role::filter_marker) + 1;  // the last role

void init_pairs() {
    for (int role = 0; role < kRoleCount; ++role) {
        const Look look = role_look(static_cast<Role>(role));
        init_pair(static_cast<short>(role + 1), static_cast<short>(look.foreground), static_cast<short>(look.background));
    }
}

// A cell in colour: top_colours decides (no bold on a coloured background); curses only sets it.
attr_t colour_attributes(const Cell& cell) {
    const Look look = colour_cell_look(cell);
    return (look.bold ? A_BOLD : A_NORMAL) | (look.dim ? A_DIM : A_NORMAL) | (look.reverse ? A_REVERSE : A_NORMAL) |
           (look.underline ? A_UNDERLINE : A_NORMAL);
}

void paint(const Screen& screen, bool colour) {
    erase();
    for (int r = 0; r < screen.height(); ++r)
        for (int c = 0; c < screen.width(); ++c) {
            const Cell& cell = screen.at(r, c);
            attr_t attributes = colour_attributes(cell);
            if (!colour) {  // -C, NO_COLOR: attributes only
                attributes = mono_attributes(cell.role);
                if (cell.bold) attributes |= A_BOLD;
                if (cell.reverse) attributes |= A_REVERSE;
                if (cell.underline) attributes |= A_UNDERLINE;
            }
            const wchar_t text[2] = {static_cast<wchar_t>(cell.ch), L'\0'};
            cchar_t glyph;
            setcchar(&glyph, text, attributes, colour ? static_cast<short>(static_cast<int>(cell.role) + 1) : 0, nullptr);
            mvadd_wch(r, c, &glyph);  // the bottom-right cell returns ERR after drawing: harmless
        }
    refresh();
}

Key translate(int status, wint_t code) {
    if (status == OK) {
        switch (code) {
            case L'\n': case L'\r': return code_key(KeyCode::enter);
            case L'\t': return code_key(KeyCode::tab);
            case 27: return code_key(KeyCode::escape);
            case 8: case 127: return code_key(KeyCode::backspace);
            default: return char_key(static_cast<char32_t>(code));
        }
    }
    switch (code) {
        case KEY_UP: return code_key(KeyCode::up);
        case KEY_DOWN: return code_key(KeyCode::down);
        case KEY_LEFT: return code_key(KeyCode::left);
        case KEY_RIGHT: return code_key(KeyCode::right);
        case KEY_PPAGE: return code_key(KeyCode::page_up);
        case KEY_NPAGE: return code_key(KeyCode::page_down);
        case KEY_HOME: return code_key(KeyCode::home);
        case KEY_END: return code_key(KeyCode::end);
        case KEY_ENTER: return code_key(KeyCode::enter);
        case KEY_BTAB: return code_key(KeyCode::back_tab);
        case KEY_BACKSPACE: return code_key(KeyCode::backspace);
        case KEY_DC: return code_key(KeyCode::del);
        case KEY_RESIZE: return code_key(KeyCode::resize);
        case KEY_MOUSE: {
            MEVENT event{};
            if (getmouse(&event) != OK) return {};
            if (event.bstate & BUTTON4_PRESSED) return code_key(KeyCode::up);
            if (event.bstate & BUTTON5_PRESSED) return code_key(KeyCode::down);
            if (event.bstate & BUTTON1_PRESSED) return click(event.y, event.x);
            return {};
        }
        default: break;
    }
    for (int n = 1; n <= 10; ++n)
        if (code == static_cast<wint_t>(KEY_F(n))) return code_key(static_cast<KeyCode>(static_cast<int>(KeyCode::f1) + n - 1));
    return {};
}

}  // namespace

int run_interactive(TopSession& session) {
    g_signal = 0;
    SignalGuard signals;
    CursesGuard curses;
    if (curses.colours) init_pairs();
    using Clock = std::chrono::steady_clock;
    auto next_sample = Clock::now() + std::chrono::milliseconds(100 * session.ui().settings.delay_tenths);
    bool dirty = true;
    while (g_signal == 0) {
        if (dirty) {
            int height = 0, width = 0;
            getmaxyx(stdscr, height, width);
            paint(session.frame(width, height), curses.colours && session.ui().settings.colour);
            dirty = false;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_sample - Clock::now()).count();
        timeout(static_cast<int>(std::clamp<long long>(left, 0, kInputTimeoutMs)));
        wint_t code = 0;
        const int status = get_wch(&code);
        if (status == ERR) {
            if (Clock::now() >= next_sample) {
                session.refresh();
                next_sample = Clock::now() + std::chrono::milliseconds(100 * session.ui().settings.delay_tenths);
                dirty = true;
            }
            continue;
        }
        const Key key = translate(status, code);
        if (!session.handle(key)) break;
        if (session.take_repaint()) clearok(curscr, TRUE);  // Ctrl-L: the whole screen again, as htop
        dirty = true;
    }
    return g_signal != 0 ? 128 + g_signal : 0;
}

}  // namespace gpupart::top
