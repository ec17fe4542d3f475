// Hostile files, blocking opens, for GPC map files ("<user dir>/GPU-<uuid>.gpcs", registry/gpcs_file.h), which
// libgpupart.so reads inside CUDA programs: a FIFO, device, symlink, a file of another owner or of the
// wrong size in a map's place is refused at once (never blocked on, never followed, never trusted), and
// the writer replaces none of them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "registry/gpcs_file.h"
#include "registry/registry_slot.h"

namespace gpupart::hostile {
namespace {

// A well-formed map of a small GPU: two GPCs of four TPCs.
gpupart_gpcs_file small_map() {
    gpupart_gpcs_file map{};
    std::memcpy(map.magic, GPUPART_GPCS_MAGIC, sizeof map.magic);
    map.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    map.file_size = sizeof map;
    gpupart_uuid_parse("GPU-11111111-2222-3333-4444-555555555555", &map.uuid);
    map.gpc_count = 2;
    map.tpc_count = 8;
    map.real_tpcs[0] = 0xff;
    map.gpc_tpcs[0][0] = 0x0f;
    map.gpc_tpcs[1][0] = 0xf0;
    // TPC numbers 0-7 on descriptor bits 0-7 (no holes); numbers past the last TPC name none.
    for (std::uint32_t k = 0; k < 128; ++k) map.bit_of_tpc[k] = static_cast<std::uint8_t>(k < map.tpc_count ? k : GPUPART_GPCS_NO_TPC);
    std::snprintf(map.source, sizeof map.source, "test");
    return map;
}

std::string map_path(const ScratchDir& dir, const gpupart_gpcs_file& map) {
    char path[512];
    gpupart_gpcs_path(dir.path.c_str(), &map.uuid, path, sizeof path);
    return path;
}

int read_map(const ScratchDir& dir, uid_t uid) {
    gpupart_gpcs_file out{};
    const gpupart_gpcs_file map = small_map();
    const auto start = std::chrono::steady_clock::now();
    const int result = gpupart_gpcs_read(dir.path.c_str(), uid, &map.uuid, &out);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "the read blocked";
    return result;
}

TEST(HostileGpcsFile, AFifoInAMapsPlaceIsRefusedWithoutBlockingAndNotReplaced) {
    ScratchDir dir;
    const std::string path = map_path(dir, small_map());
    ASSERT_EQ(::mkfifo(path.c_str(), 0666), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), -EINVAL);
    const gpupart_gpcs_file map = small_map();
    EXPECT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), -EINVAL);
    struct stat info {};
    ASSERT_EQ(::lstat(path.c_str(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(HostileGpcsFile, ADeviceInAMapsPlaceIsRefused) {
    if (!is_root()) GTEST_SKIP() << "mknod needs root";
    ScratchDir dir;
    const std::string path = map_path(dir, small_map());
    ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, 5)), 0);  // a /dev/zero
    EXPECT_EQ(read_map(dir, ::getuid()), -EINVAL);
    const gpupart_gpcs_file map = small_map();
    EXPECT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), -EINVAL);
}

TEST(HostileGpcsFile, ASymlinkIsNeitherFollowedWhenReadingNorReplacedWhenWriting) {
    ScratchDir dir;
    const gpupart_gpcs_file map = small_map();
    const std::string target = dir / "elsewhere";
    {
        std::ofstream out(target, std::ios::binary);
        out.write(reinterpret_cast<const char*>(&map), sizeof map);  // a perfect map, behind a link
    }
    const std::string path = map_path(dir, map);
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), -ELOOP);
    gpupart_gpcs_file other = small_map();
    other.source[0] = 'X';
    EXPECT_EQ(gpupart_gpcs_write(dir.path.c_str(), &other), -ELOOP);
    EXPECT_EQ(slurp(target), std::string(reinterpret_cast<const char*>(&map), sizeof map)) << "the link's target changed";
}

TEST(HostileGpcsFile, AMapOfAnotherOwnerIsNotTrusted) {
    if (!is_root()) GTEST_SKIP() << "chown needs root";
    ScratchDir dir;
    const gpupart_gpcs_file map = small_map();
    ASSERT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), 0);
    ASSERT_EQ(::chown(map_path(dir, map).c_str(), 12345, 12345), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), -EPERM);
    EXPECT_EQ(read_map(dir, 12345), 0) << "its owner's map, read as that owner's";
}

TEST(HostileGpcsFile, ATruncatedOrGrownMapIsRefused) {
    ScratchDir dir;
    const gpupart_gpcs_file map = small_map();
    ASSERT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), 0);
    const std::string path = map_path(dir, map);
    ASSERT_EQ(::truncate(path.c_str(), sizeof map - 1), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), -EPERM);
    ASSERT_EQ(::truncate(path.c_str(), 1 << 20), 0);
    EXPECT_EQ(read_map(dir, ::getuid()), -EPERM);
    ASSERT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), 0) << "a regular file of ours is replaced whole";
    EXPECT_EQ(read_map(dir, ::getuid()), 0);
}

TEST(HostileGpcsFile, AMapInASetgidDirectoryIsGroupWritable) {
    ScratchDir dir;
    ASSERT_EQ(::chmod(dir.path.c_str(), 02755), 0);
    const gpupart_gpcs_file map = small_map();
    ASSERT_EQ(gpupart_gpcs_write(dir.path.c_str(), &map), 0);
    struct stat info {};
    ASSERT_EQ(::stat(map_path(dir, map).c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0664u);
}

}  // namespace
}  // namespace gpupart::hostile
