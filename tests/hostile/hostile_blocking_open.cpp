// Class 1 of issue 15: a FIFO (or device node) where gpupart expects a regular file must never make it
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
    ASSERT_EQ(::mkfifo((registry + "/1-1.slot").c_str(), 0666), 0);
    const std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + (scratch / "journal")};
    for (const auto& args : std::vector<std::vector<std::string>>{{"list"}, {"list", "--json"}, {"check"}}) {
        const Outcome outcome = gpupart(args, env, std::nullopt, std::nullopt, 5000);
        EXPECT_FALSE(outcome.timed_out) << "gpupart " << args[0] << " hung on a FIFO in the registry";
        EXPECT_NE(outcome.out.find("1-1.slot"), std::string::npos)
            << "the FIFO is reported, not silently skipped:\n" << outcome.out << outcome.err;
    }
}

}  // namespace
}  // namespace gpupart::hostile
