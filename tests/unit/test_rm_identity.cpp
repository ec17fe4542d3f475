// The GPU's UUID and name through the RM controls (GPU_GET_GID_INFO, GPU_GET_NAME_STRING), against the
// recorded H100 replies: the replay answers them only where a test supplies the bytes, as a driver would,
// so the reader's whole path runs, including replies a hostile or broken driver could give.
#include <gtest/gtest.h>

#include <string>

#include "rm_fixture_transport.hpp"
#include "sources/rm_gpu_builder.hpp"
#include "sources/rm_reader.hpp"

using namespace gpupart;

namespace {

const std::string kFixtures = std::string(GPUPART_FIXTURES) + "/h100-rmctrl";
const std::string kUuid = "GPU-6b739b16-7324-b8e6-a08f-57f90c3491a5";

struct Read {
    RmReadResult result;
    Gpu gpu;
};

Read read_with(test::FixtureFaults faults) {
    test::RmFixtureTransport transport(test::load_recorded_rm(kFixtures, "nobody"), std::move(faults));
    Read read{read_rm_facts(transport, "0000:01:00.0", false), {}};
    if (read.result.facts) add_rm_facts(*read.result.facts, 1, read.gpu);
    return read;
}

test::FixtureFaults identity(std::string gid, std::string name = "NVIDIA H100 80GB HBM3") {
    test::FixtureFaults faults;
    faults.gid = std::move(gid);
    faults.name = std::move(name);
    return faults;
}

}  // namespace

TEST(RmIdentity, TheUuidAndNameComeFromTheDriver) {
    const Read read = read_with(identity(kUuid));
    ASSERT_TRUE(read.result.facts) << read.result.status.detail;
    ASSERT_TRUE(read.gpu.uuid.known()) << read.gpu.uuid.unknown_reason;
    EXPECT_EQ(*read.gpu.uuid.value, kUuid);
    EXPECT_EQ(read.gpu.uuid.from.source, Source::rmctrl);
    EXPECT_EQ(read.gpu.uuid.from.detail, "GPU_GET_GID_INFO");
    ASSERT_TRUE(read.gpu.name.known());
    EXPECT_EQ(*read.gpu.name.value, "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(read.gpu.gpcs.size() > 0);  // the rest is read as before
}

TEST(RmIdentity, AControlTheDriverRefusesLeavesTheUuidToNvml) {
    const Read read = read_with({});  // the recording never asked: the replay answers NV_ERR_NOT_SUPPORTED
    ASSERT_TRUE(read.result.facts);
    EXPECT_FALSE(read.gpu.uuid.known());
    EXPECT_EQ(read.gpu.uuid.unknown_reason, "GPU_GET_GID_INFO: NV_ERR_NOT_SUPPORTED (0x56) (NVML gives it)");
    EXPECT_FALSE(read.gpu.name.known());
    EXPECT_EQ(read.gpu.gpcs.size(), 8u);
}

TEST(RmIdentity, RepliesThatAreNoUuidAreRefusedOneByOne) {
    for (const std::string& bad : {std::string("GPU-6b739b16-7324-b8e6-a08f-57f90c3491a"),        // one digit short
                                  std::string("GPU-6b739b16-7324-b8e6-a08f-57f90c3491aZ"),       // not hex
                                  std::string("MIG-6b739b16-7324-b8e6-a08f-57f90c3491a5"),       // not a GPU's
                                  std::string("GPU-6b739b16\x1b[2J-b8e6-a08f-57f90c3491a5"),     // an escape code
                                  std::string(300, 'A'),                                         // no end in the field
                                  std::string()}) {
        const Read read = read_with(identity(bad));
        ASSERT_TRUE(read.result.facts);
        EXPECT_FALSE(read.gpu.uuid.known()) << bad;
        EXPECT_NE(read.gpu.uuid.unknown_reason.find("GPU_GET_GID_INFO: unexpected reply"), std::string::npos)
            << read.gpu.uuid.unknown_reason;
        EXPECT_TRUE(read.gpu.name.known());  // one bad answer costs only its own fact
    }
}

TEST(RmIdentity, ANameWithControlCharactersIsRefused) {
    for (const std::string& bad : {std::string("NVIDIA \x1b]0;owned\x07H100"), std::string(200, 'N'), std::string()}) {
        const Read read = read_with(identity(kUuid, bad));
        ASSERT_TRUE(read.result.facts);
        EXPECT_FALSE(read.gpu.name.known()) << bad;
        EXPECT_NE(read.gpu.name.unknown_reason.find("GPU_GET_NAME_STRING: unexpected reply"), std::string::npos);
        EXPECT_TRUE(read.gpu.uuid.known());
    }
}
