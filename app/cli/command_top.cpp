// gpupart top: the floorplan and the partitioned processes of one GPU, live in the terminal (htop keys),
// with repartitioning through the controller; --batch prints frames as text, like `top -b`.
#include <cstring>
#include <langinfo.h>
#include <memory>
#include <regex>
#include <thread>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "top/top_curses.hpp"
#include "top/top_session.hpp"
#include "top/top_settings_file.hpp"

namespace gpupart::cli {
namespace {

struct TopOptions {
    SnapshotOptions snapshot;
    int delay_tenths = 10;
    bool delay_given = false;  // -d: for this session, over toprc's
    std::string sort;          // --sort COLUMN: for this session, over toprc's
    bool no_colour = false;
    bool no_floorplan = false;  // --no-floorplan: for this session, over toprc's (v toggles it live)
    bool batch = false;
    int frames = 1;
    std::string size;
};

// The map to show, and whether it may be used to change partitions (as partition_topology decides).
top::TopSource choose_source(const SnapshotOptions& options, ChosenSnapshot& chosen) {
    top::TopSource source;
    try {
        chosen = partition_topology(options);
    } catch (const UserError& why) {  // e.g. mask bits not probed yet: shown, not changeable
        chosen = load_chosen(options);
        source.read_only = why.what();
    }
    source.origin = chosen.origin;
    source.builtin = chosen.builtin;
    source.why = chosen.why;
    source.gpu_count = static_cast<int>(chosen.snapshot.gpus.size());
    // A map named with --snapshot on a machine with a GPU: say that the map is the recording's.
    if (options.snapshot)
        if (const auto gpus = find_nvidia_gpus(); !gpus.empty())
            source.why += fmt::format(" · not this machine's GPU ({} NVIDIA GPU{} at {}{})", gpus.size(), gpus.size() == 1 ? "" : "s",
                                      gpus.front().bus_id, gpus.size() == 1 ? "" : ", ...");
    return source;
}

std::pair<int, int> batch_size(const std::string& size) {
    if (!size.empty()) {
        std::smatch match;
        if (!std::regex_match(size, match, std::regex(R"((\d{2,3})x(\d{2,3}))")))
            throw UserError(fmt::format("--size '{}': expected COLUMNSxLINES, e.g. 120x40", size));
        return {std::stoi(match[1]), std::stoi(match[2])};
    }
    winsize window{};
    if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0 && window.ws_col > 0 && window.ws_row > 0)
        return {window.ws_col, window.ws_row};
    return {120, 40};
}

// The settings a session starts with: toprc's, then what the command line and the environment say for
// this session alone.
top::SavedView starting_view(const TopOptions& options, const top::SavedView& from_file) {
    top::SavedView view = from_file;
    if (options.delay_given) view.settings.delay_tenths = options.delay_tenths;
    if (options.no_colour || no_color_requested()) view.settings.colour = false;
    if (options.no_floorplan) view.settings.show_floorplan = false;
    if (std::strcmp(::nl_langinfo(CODESET), "UTF-8") != 0) view.settings.ascii = true;  // the terminal cannot show them
    if (const auto key = top::sort_key_named(options.sort)) {  // checked by the option's validator
        view.sort = *key;
        view.sort_descending = top::sorts_highest_first(*key);
    }
    return view;
}

int run_top(const TopOptions& options) {
    std::setlocale(LC_ALL, "");
    ChosenSnapshot chosen;
    top::TopSource source = choose_source(options.snapshot, chosen);
    const auto toprc = top::toprc_path();
    const top::LoadedToprc loaded = toprc ? top::load_toprc(*toprc) : top::LoadedToprc{};
    const top::SavedView start = starting_view(options, loaded.view);
    const Gpu& gpu = selected_gpu(chosen, options.snapshot);
    top::TopSession session(Controller(Registry(Registry::default_directory()), gpu, Journal(Journal::default_path())),
                            Registry(Registry::default_directory(), chosen.snapshot.gpus), std::move(source), start.settings, chosen.snapshot.gpus);
    session.set_sort(start.sort, start.sort_descending);
    if (!loaded.warning.empty()) {
        if (options.batch) fmt::print(stderr, "gpupart top: {}\n", loaded.warning);
        session.say(loaded.warning, true);
    }
    if (!options.batch) {
        if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO))
            throw UserError("gpupart top needs a terminal: use --batch to print frames as text");
        const int status = top::run_interactive(session);
        // As htop writes its htoprc on quitting: only what the user changed in this session (batch never writes).
        const top::SavedView end{session.ui().settings, session.ui().sort, session.ui().sort_descending};
        const top::SavedView keep = top::settings_to_save(loaded.view, start, end);
        if (toprc && keep != loaded.view) {
            try {
                top::save_toprc(*toprc, keep);
            } catch (const UserError& error) {
                fmt::print(stderr, "gpupart top: settings not saved: {}\n", error.what());
            }
        }
        return status;
    }
    const auto [width, height] = batch_size(options.size);
    session.set_batch(true);
    for (int frame = 0; frame < options.frames; ++frame) {
        if (frame > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100 * session.ui().settings.delay_tenths));
            session.refresh();
            fmt::print("\n");
        }
        fmt::print("{}", session.frame(width, height).text());
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

Command add_top_command(CLI::App& app) {
    auto options = std::make_shared<TopOptions>();
    CLI::App* top = app.add_subcommand("top", "The floorplan and the partitioned processes, live in the terminal (F1: keys)");
    CLI::Option* delay = top->add_option("-d,--delay", options->delay_tenths, "Refresh every N tenths of a second (over toprc's)")
                             ->check(CLI::Range(1, 600));
    std::vector<std::string> columns;
    for (top::SortKey key : top::kSortKeys) columns.emplace_back(top::sort_key_name(key));
    top->add_option("-s,--sort", options->sort,
                    fmt::format("Sort by this column: {} (numbers highest first; over toprc's)", fmt::join(columns, ", ")))
        ->check(CLI::Validator(
            [columns](std::string& value) {
                return top::sort_key_named(value) ? std::string() : fmt::format("not a column; the columns are {}", fmt::join(columns, ", "));
            },
            "COLUMN"));
    top->add_flag("-C,--no-colour,--no-color", options->no_colour, "No colours (attributes only); the default where NO_COLOR is set");
    top->add_flag("--no-floorplan", options->no_floorplan,
                  "Hide the floorplan: the process table takes its rows (v toggles it; F2 keeps it in toprc as floorplan=no)");
    top->add_flag("-b,--batch", options->batch,
                  "Print frames as plain text to stdout instead of the interactive view: every process, as top -b");
    top->add_option("-n,--frames", options->frames, "With --batch: how many frames (one every --delay)")->check(CLI::Range(1, 100000));
    top->add_option("--size", options->size, "With --batch: COLUMNSxLINES of a frame, taller where every process needs it (default: the terminal's, else 120x40)");
    add_snapshot_options(*top, options->snapshot);
    return {top, [options, delay] {
                options->delay_given = delay->count() > 0;
                return run_top(*options);
            }};
}

}  // namespace gpupart::cli
