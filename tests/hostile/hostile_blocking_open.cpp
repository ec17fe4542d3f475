// Hostile files, blocking opens: a FIFO (or device node) where gpupart expects a regular file must never make it
// block. Every reader opens with O_NONBLOCK and checks the type with fstat after the open.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

TEST(HostileBlockingOpen, FifoNamedLikeASlotDoesNotHangList) {
    ScratchDir scratch;
    const std::string registry = scratch / "registry";
    ASSERT_EQ(::mkdir(registry.c_str(), 0755), 0);
    // One in the root (where layout 2 kept slots) and one in this user's own directory.
    const std::string user_dir = registry + "/u" + std::to_string(::geteuid());
    ASSERT_EQ(::mkdir(user_dir.c_str(), 0755), 0);
    ASSERT_EQ(::mkfifo((registry + "/1-1.slot").c_str(), 0666), 0);
    ASSERT_EQ(::mkfifo((user_dir + "/2-2.slot").c_str(), 0644), 0);
    const std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + (scratch / "journal")};
    for (const auto& args : std::vector<std::vector<std::string>>{{"list"}, {"list", "--json"}, {"check"}, {"set", "2", "all"}}) {
        const Outcome outcome = gpupart(args, env, std::nullopt, std::nullopt, 5000);
        EXPECT_FALSE(outcome.timed_out) << "gpupart " << args[0] << " hung on a FIFO in the registry";
        if (args[0] != "list") continue;
        for (const char* name : {"1-1.slot", "2-2.slot"})
            EXPECT_NE(outcome.out.find(name), std::string::npos)
                << "the FIFO " << name << " is reported, not silently skipped:\n" << outcome.out << outcome.err;
        EXPECT_NE(outcome.out.find("FIFO"), std::string::npos) << outcome.out;
    }
}

}  // namespace
}  // namespace gpupart::hostile
