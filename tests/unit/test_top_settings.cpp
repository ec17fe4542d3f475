// gpupart top's toprc: the text it writes, what it reads back, what a session keeps, and files that must
// not hang or fool it (a FIFO, a symlink, a huge file, garbage): each gives the defaults and one line.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "top/top_settings_file.hpp"

using namespace gpupart;
using namespace gpupart::top;

namespace {

// A private directory for one test, removed after it.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "gpupart-toprc-XXXXXX").string();
        path = ::mkdtemp(pattern.data());
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

SavedView changed_view() {
    SavedView view;
    view.sort = SortKey::cpu;
    view.sort_descending = true;
    view.settings.delay_tenths = 25;
    view.settings.colour = false;
    view.settings.show_findings = false;
    view.settings.show_sm_ids = false;
    view.settings.show_floorplan = false;
    view.settings.ascii = true;
    return view;
}

// Sets an environment variable for one scope.
struct Env {
    std::string name;
    std::optional<std::string> old;
    Env(std::string n, const char* value) : name(std::move(n)) {
        if (const char* was = std::getenv(name.c_str())) old = was;
        if (value) ::setenv(name.c_str(), value, 1); else ::unsetenv(name.c_str());
    }
    ~Env() {
        if (old) ::setenv(name.c_str(), old->c_str(), 1); else ::unsetenv(name.c_str());
    }
};

}  // namespace

TEST(Toprc, WritesKeyValueLinesAndReadsThemBack) {
    const SavedView view = changed_view();
    const std::string text = toprc_text(view);
    EXPECT_NE(text.find("\nsort=CPU%\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nsort_descending=yes\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ndelay_tenths=25\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ncolour=no\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nascii=yes\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nfloorplan=no\n"), std::string::npos) << text;  // v hid it
    EXPECT_EQ(text.find("filter"), std::string::npos) << "the filter is not kept, as in htop";
    const ParsedToprc parsed = parse_toprc(text);
    EXPECT_EQ(parsed.problem, "");
    EXPECT_EQ(parsed.view, view);
    EXPECT_EQ(parse_toprc(toprc_text(SavedView{})).view, SavedView{});
    for (SortKey key : kSortKeys) {  // every column's title reads back
        SavedView sorted;
        sorted.sort = key;
        EXPECT_EQ(parse_toprc(toprc_text(sorted)).view.sort, key) << sort_key_name(key);
    }
}

TEST(Toprc, ABadLineKeepsItsDefaultAndIsNamedUnknownKeysAreSkipped) {
    const ParsedToprc parsed = parse_toprc("# comment\n\n  sort = rss \r\nfuture_key=whatever\ndelay_tenths=9000\ncolour=maybe\nno equals sign\nfindings=no\n");
    EXPECT_EQ(parsed.view.sort, SortKey::rss);  // spaces and a CR around it
    EXPECT_EQ(parsed.view.settings.delay_tenths, 10);  // out of range (1..600): the default
    EXPECT_TRUE(parsed.view.settings.colour);
    EXPECT_FALSE(parsed.view.settings.show_findings);  // later lines are still read
    EXPECT_EQ(parsed.problem, "line 5 'delay_tenths=9000' is not understood (that setting keeps its default)");
    EXPECT_EQ(parse_toprc("sort=NICE\n").problem, "line 1 'sort=NICE' is not understood (that setting keeps its default)");
    EXPECT_EQ(parse_toprc("delay_tenths=12abc\n").view.settings.delay_tenths, 10);
    EXPECT_EQ(parse_toprc("future_key=1\n").problem, "");  // a later gpupart's key: no warning at every start
    // Control bytes in a line are escaped in the warning, never sent to the terminal.
    EXPECT_EQ(parse_toprc("sort=\x1b[2J\n").problem.find('\x1b'), std::string::npos);
}

TEST(Toprc, SavesAtomicallyMakingItsDirectoryAndLoadsBack) {
    TempDir dir;
    const std::string path = dir.file("config/gpupart/toprc");
    EXPECT_EQ(load_toprc(path).view, SavedView{});  // missing: the defaults, no warning
    EXPECT_EQ(load_toprc(path).warning, "");
    save_toprc(path, changed_view());
    const LoadedToprc loaded = load_toprc(path);
    EXPECT_EQ(loaded.warning, "");
    EXPECT_EQ(loaded.view, changed_view());
    // Replaced by rename: no temporary file is left beside it.
    int files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.file("config/gpupart"))) ++files;
    EXPECT_EQ(files, 1);
    struct stat info {};
    ASSERT_EQ(::stat(dir.file("config/gpupart").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST(Toprc, AFifoASymlinkAHugeFileAndADirectoryGiveTheDefaultsAndOneLine) {
    TempDir dir;
    const auto expect_defaults = [](const std::string& path, const std::string& why) {
        // A FIFO with no writer would block a plain open forever: the load must come back at once.
        auto loading = std::async(std::launch::async, [path] { return load_toprc(path); });
        ASSERT_EQ(loading.wait_for(std::chrono::seconds(5)), std::future_status::ready) << why << ": load_toprc hung";
        const LoadedToprc loaded = loading.get();
        EXPECT_EQ(loaded.view, SavedView{}) << why;
        EXPECT_NE(loaded.warning.find(path), std::string::npos) << why << ": " << loaded.warning;
        EXPECT_NE(loaded.warning.find(why), std::string::npos) << loaded.warning;
        EXPECT_NE(loaded.warning.find("starts with its defaults"), std::string::npos) << loaded.warning;
        EXPECT_EQ(loaded.warning.find('\n'), std::string::npos) << "one line";
    };
    const std::string fifo = dir.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expect_defaults(fifo, "FIFO");

    const std::string real = dir.file("real");
    write(real, toprc_text(changed_view()));
    const std::string link = dir.file("link");
    std::filesystem::create_symlink(real, link);
    expect_defaults(link, "symbolic link");

    const std::string huge = dir.file("huge");
    write(huge, "sort=PID\n" + std::string(kToprcMaxBytes, '#'));
    expect_defaults(huge, "bytes");

    std::filesystem::create_directory(dir.file("directory"));
    expect_defaults(dir.file("directory"), "directory");

    // Writing over a symlink replaces nothing it points to: refused.
    EXPECT_THROW(save_toprc(link, SavedView{}), UserError);
    EXPECT_EQ(read(real), toprc_text(changed_view()));
}

TEST(Toprc, GarbageGivesWhatItCanAndNamesTheFirstBadLine) {
    TempDir dir;
    const std::string path = dir.file("toprc");
    std::string garbage = "\xff\xfe garbage binary\n";
    garbage[11] = '\0';  // a NUL byte inside the line
    write(path, garbage + "sort=MEM\n");
    const LoadedToprc loaded = load_toprc(path);
    EXPECT_EQ(loaded.view.sort, SortKey::memory);
    EXPECT_NE(loaded.warning.find(path + ": line 1"), std::string::npos) << loaded.warning;
}

// A session keeps what the user changed in it; what the command line set for the session alone is not
// written (htop -d 5 once must not make every later htop refresh every half second).
TEST(Toprc, ASessionKeepsWhatTheUserChangedNotTheCommandLine) {
    SavedView file;
    file.sort = SortKey::rate;
    file.sort_descending = true;
    SavedView start = file;
    start.settings.delay_tenths = 3;  // -d 3
    start.settings.colour = false;    // -C
    SavedView end = start;
    EXPECT_EQ(settings_to_save(file, start, end), file);  // nothing changed: the file stays as it was
    end.sort = SortKey::user;
    end.sort_descending = false;
    end.settings.show_findings = false;
    const SavedView kept = settings_to_save(file, start, end);
    EXPECT_EQ(kept.sort, SortKey::user);
    EXPECT_FALSE(kept.sort_descending);
    EXPECT_FALSE(kept.settings.show_findings);
    EXPECT_EQ(kept.settings.delay_tenths, 10);  // -d was for the session
    EXPECT_TRUE(kept.settings.colour);          // -C too
    end.settings.delay_tenths = 20;             // changed in F2 during the session: kept
    EXPECT_EQ(settings_to_save(file, start, end).settings.delay_tenths, 20);
}

TEST(Toprc, ThePathFollowsXdgConfigHomeElseHome) {
    {
        Env xdg("XDG_CONFIG_HOME", "/somewhere/config");
        EXPECT_EQ(toprc_path(), "/somewhere/config/gpupart/toprc");
    }
    {
        Env xdg("XDG_CONFIG_HOME", "relative/config");  // not absolute: ignored, as the XDG spec says
        Env home("HOME", "/home/someone");
        EXPECT_EQ(toprc_path(), "/home/someone/.config/gpupart/toprc");
    }
    {
        Env xdg("XDG_CONFIG_HOME", nullptr);
        Env home("HOME", "/home/else");
        EXPECT_EQ(toprc_path(), "/home/else/.config/gpupart/toprc");
    }
}
