// platform/safe_file, the one mechanism every reader and writer of a file someone else may have planted
// goes through (classes 1, 3 and 9), tested on real FIFOs, device nodes, symlinks and pipes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "../lib/thrown_message.hpp"

namespace gpupart::hostile {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string error_of(auto&& action) {
    return gpupart::test::thrown_message([&] { action(); }, "(no error)");
}

std::size_t entries(const std::string& dir) {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

TEST(HostileSafeFile, OpenRegularRefusesFifoDeviceAndDirectoryWithoutBlocking) {
    ScratchDir scratch;
    const std::string fifo = scratch / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
    EXPECT_EQ(error_of([&] { open_regular(fifo, O_RDONLY, Links::follow, "test file"); }),
              fifo + ": is a FIFO, not a regular file; the test file must be a regular file: nothing done");
    EXPECT_EQ(error_of([&] { open_regular(fifo, O_RDWR | O_APPEND, Links::refuse, "test file"); }),
              fifo + ": is a FIFO, not a regular file; the test file must be a regular file: nothing done");
    EXPECT_EQ(error_of([&] { open_regular(scratch.path, O_RDONLY, Links::follow, "test file"); }),
              scratch.path + ": is a directory, not a regular file; the test file must be a regular file: nothing done");
    if (is_root()) {
        const std::string zero = scratch / "zero";
        ASSERT_EQ(::mknod(zero.c_str(), S_IFCHR | 0666, ::makedev(1, 5)), 0);
        EXPECT_EQ(error_of([&] { read_regular_file(zero, 100, Links::follow, "test file"); }),
                  zero + ": is a character device, not a regular file; the test file must be a regular file: nothing done");
    }
}

TEST(HostileSafeFile, LinksAreFollowedOnlyWhenAsked) {
    ScratchDir scratch;
    const std::string target = scratch / "target";
    std::ofstream(target) << "content";
    const std::string link = scratch / "link";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    EXPECT_EQ(read_regular_file(link, 100, Links::follow, "test file"), "content");
    EXPECT_EQ(error_of([&] { read_regular_file(link, 100, Links::refuse, "test file"); }),
              link + ": is a symbolic link; gpupart does not follow links here (test file): nothing done");
    // A link to a FIFO is refused by what it points to, without blocking.
    const std::string fifo = scratch / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
    const std::string fifo_link = scratch / "fifo-link";
    ASSERT_EQ(::symlink(fifo.c_str(), fifo_link.c_str()), 0);
    EXPECT_NE(error_of([&] { read_regular_file(fifo_link, 100, Links::follow, "test file"); }).find(": is a FIFO"),
              std::string::npos);
}

TEST(HostileSafeFile, MissingFilesAndCreation) {
    ScratchDir scratch;
    const std::string missing = scratch / "missing";
    EXPECT_FALSE(read_regular_file_if_exists(missing, 100, Links::refuse, "test file").has_value());
    EXPECT_FALSE(open_regular(missing, O_RDONLY, Links::refuse, "test file", true).has_value());
    EXPECT_EQ(error_of([&] { read_regular_file(missing, 100, Links::refuse, "test file"); }),
              missing + ": cannot open the test file: No such file or directory");
    const mode_t umask_now = ::umask(0);
    ::umask(umask_now);
    auto created = open_regular(missing, O_RDWR | O_CREAT, Links::refuse, "test file", false, 0640);
    ASSERT_TRUE(created.has_value());
    EXPECT_EQ(created->size, 0);
    EXPECT_EQ(created->mode & 0777, 0640u & ~umask_now);
    // The descriptor is blocking again: ordinary reads and locks behave as usual.
    EXPECT_EQ(::fcntl(created->fd.get(), F_GETFL) & O_NONBLOCK, 0);
}

TEST(HostileSafeFile, ReadsAreBounded) {
    ScratchDir scratch;
    const std::string exact = scratch / "exact";
    std::ofstream(exact) << std::string(100, 'x');
    EXPECT_EQ(read_regular_file(exact, 100, Links::refuse, "test file").size(), 100u);
    EXPECT_EQ(error_of([&] { read_regular_file(exact, 99, Links::refuse, "test file"); }),
              exact + ": the test file is 100 bytes, more than the 99 any real one needs: nothing read");
    // A sparse file of 1 TiB is refused by its size, before a byte is read.
    const std::string huge = scratch / "huge";
    std::ofstream(huge) << "x";
    ASSERT_EQ(::truncate(huge.c_str(), 1LL << 40), 0);
    EXPECT_NE(error_of([&] { read_regular_file(huge, 1 << 20, Links::refuse, "test file"); }).find("1099511627776 bytes"),
              std::string::npos);
    // A descriptor whose size says nothing (a pipe here, a file growing meanwhile) is cut off at the bound.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "0123456789", 10), 10);
    ::close(fds[1]);
    EXPECT_EQ(error_of([&] { read_bounded(fds[0], 9, "pipe", "test file"); }),
              "pipe: the test file is larger than 9 bytes, more than any real one: nothing read");
    ::close(fds[0]);
}

TEST(HostileSafeFile, ReplaceFileWritesNewAndRegularTargetsOnly) {
    ScratchDir scratch;
    const std::string file = scratch / "file";
    replace_file(file, "one", 0640, "test file");
    EXPECT_EQ(slurp(file), "one");
    struct stat info {};
    ASSERT_EQ(::stat(file.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0640u) << "the mode asked for, whatever the umask";
    replace_file(file, "two", 0644, "test file");
    EXPECT_EQ(slurp(file), "two");
    EXPECT_EQ(entries(scratch.path), 1u) << "no temporary left behind";

    const std::string victim = scratch / "victim";
    std::ofstream(victim) << "victim";
    const std::string link = scratch / "link";
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    const std::string fifo = scratch / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
    const std::string dir = scratch / "dir";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    std::vector<std::pair<std::string, std::string>> targets = {
        {link, "a symbolic link"}, {fifo, "a FIFO"}, {dir, "a directory"}};
    if (is_root()) {
        const std::string full = scratch / "full";
        ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)), 0);
        targets.emplace_back(full, "a character device");
    }
    for (const auto& [target, kind] : targets) {
        struct stat before {};
        ASSERT_EQ(::lstat(target.c_str(), &before), 0);
        EXPECT_EQ(error_of([&] { replace_file(target, "new", 0644, "test file"); }),
                  target + ": is " + kind + "; gpupart writes the test file only to a new or regular file: nothing written");
        struct stat after {};
        ASSERT_EQ(::lstat(target.c_str(), &after), 0);
        EXPECT_EQ(after.st_ino, before.st_ino) << target << " was replaced";
        EXPECT_EQ(after.st_mode, before.st_mode);
    }
    EXPECT_EQ(slurp(victim), "victim");
    EXPECT_EQ(entries(scratch.path), 5u + (is_root() ? 1u : 0u)) << "no temporary left behind";
}

TEST(HostileSafeFile, CreateFileNeverReplaces) {
    ScratchDir scratch;
    const std::string file = scratch / "file";
    EXPECT_TRUE(create_file(file, "first", 0644, "test file"));
    EXPECT_FALSE(create_file(file, "second", 0644, "test file"));
    EXPECT_EQ(slurp(file), "first");
    // A dangling symlink at the name counts as taken: link(2) never follows it to create its target.
    const std::string link = scratch / "link";
    ASSERT_EQ(::symlink((scratch / "nowhere").c_str(), link.c_str()), 0);
    EXPECT_EQ(error_of([&] { create_file(link, "x", 0644, "test file"); }),
              link + ": is a symbolic link; gpupart writes the test file only to a new or regular file: nothing written");
    EXPECT_FALSE(std::filesystem::exists(scratch / "nowhere"));
    EXPECT_EQ(entries(scratch.path), 2u) << "no temporary left behind";
}

TEST(HostileSafeFile, TemporaryNamesAreHiddenRandomAndBesideTheTarget) {
    const std::string a = random_temporary_name("/some/dir/out.json");
    const std::string b = random_temporary_name("/some/dir/out.json");
    EXPECT_NE(a, b);
    EXPECT_TRUE(a.starts_with("/some/dir/.out.json.")) << a;
    EXPECT_TRUE(a.ends_with(".tmp")) << a;
    EXPECT_EQ(a.size(), std::string("/some/dir/.out.json.").size() + 16 + 4) << a;
    EXPECT_TRUE(random_temporary_name("out.json").starts_with("./.out.json."));
    EXPECT_TRUE(random_temporary_name("/out.json").starts_with("/.out.json."));
}

}  // namespace
}  // namespace gpupart::hostile
