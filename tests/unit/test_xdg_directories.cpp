// XDG base directories (platform/xdg_directories.hpp): an absolute $XDG_*_HOME, else under $HOME, else none.
#include <gtest/gtest.h>

#include <cstdlib>

#include "platform/xdg_directories.hpp"

using namespace gpupart;

TEST(XdgDirectories, AnAbsoluteVariableWinsARelativeOneIsIgnoredAndNoHomeIsNone) {
    ::setenv("HOME", "/home/alice", 1);
    ::setenv("XDG_STATE_HOME", "/var/alice-state", 1);
    ::setenv("XDG_CACHE_HOME", "relative/cache", 1);  // invalid per the spec: ignored
    EXPECT_EQ(xdg_base_directory(XdgBase::state), "/var/alice-state");
    EXPECT_EQ(xdg_base_directory(XdgBase::cache), "/home/alice/.cache");
    ::unsetenv("XDG_STATE_HOME");
    EXPECT_EQ(xdg_base_directory(XdgBase::state), "/home/alice/.local/state");
    ::unsetenv("XDG_CACHE_HOME");
    ::setenv("HOME", "", 1);
    EXPECT_FALSE(xdg_base_directory(XdgBase::state).has_value());
    EXPECT_FALSE(xdg_base_directory(XdgBase::cache).has_value());
}
