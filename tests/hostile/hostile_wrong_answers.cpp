// Answers that were silent or wrong. A live process whose slot cannot be read is
// said to be there (check, top at 80x24), never counted as idle TPCs; a registry removed under a running
// `top` is said, not shown as "0 processes"; a PID is read strictly ("0x4a02" is not 18946).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "hostile_demo_worker.hpp"
#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

class HostileWrongAnswers : public ::testing::Test {
protected:
    ScratchDir scratch;
    std::string registry = scratch / "registry";
    std::string journal = scratch / "journal";
    std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + journal};

    // Overwrites the slot's magic in place (no truncation: that is class 2), as another layout or a
    // hostile writer would leave it: the registry then reports the slot with a problem and no record.
    static void garble(const std::string& slot) {
        const int fd = ::open(slot.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0) << slot;
        ASSERT_EQ(::pwrite(fd, "garbage!", 8, 0), 8);
        ::close(fd);
    }
};

TEST_F(HostileWrongAnswers, CheckSaysALiveProcessesSlotIsUnreadableAndCallsNoneOfItsTpcsIdle) {
    DemoWorker readable(registry, "readable", "gpc0");
    DemoWorker unreadable(registry, "unreadable", "gpc1");
    garble(unreadable.slot);
    const Outcome check = gpupart({"check", "--snapshot", "builtin:h200"}, env);
    ASSERT_EQ(check.exit_code, 0) << check.err;
    EXPECT_NE(check.out.find("1 unreadable slot"), std::string::npos) << check.out;
    EXPECT_NE(check.out.find(fmt::format("process {} is running but its slot", unreadable.pid)), std::string::npos) << check.out;
    EXPECT_NE(check.out.find("cannot be read"), std::string::npos) << check.out;
    EXPECT_EQ(check.out.find("stay idle"), std::string::npos) << "TPCs called idle beside an unreadable slot:\n" << check.out;

    const Outcome json = gpupart({"check", "--json", "--snapshot", "builtin:h200"}, env);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto parsed = nlohmann::json::parse(json.out);
    EXPECT_EQ(parsed["unreadable_slots"], 1);
    bool warned = false;
    for (const auto& finding : parsed["findings"]) {
        EXPECT_NE(finding["id"], "idle-tpcs");
        warned = warned || finding["id"] == "unreadable-slot";
    }
    EXPECT_TRUE(warned) << json.out;
}

TEST_F(HostileWrongAnswers, TopAt80x24ShowsUnreadableSlots) {
    DemoWorker readable(registry, "readable", "gpc0");
    DemoWorker unreadable(registry, "unreadable", "gpc1");
    garble(unreadable.slot);
    const Outcome top = gpupart({"top", "--batch", "--size", "80x24", "--snapshot", "builtin:h200"}, env);
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_NE(top.out.find("1 unreadable slot"), std::string::npos) << top.out;
}

TEST_F(HostileWrongAnswers, TopSaysTheRegistryIsGoneWhenItIsRemovedWhileItRuns) {
    auto worker = std::make_unique<DemoWorker>(registry, "soon-gone", "gpc0");
    std::thread remover([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        worker->stop();
        std::error_code ignored;
        std::filesystem::remove_all(registry, ignored);
    });
    // 30 frames a tenth of a second apart: the first ones see the worker, the last ones no registry.
    const Outcome top = gpupart({"top", "--batch", "-n", "30", "-d", "1", "--size", "100x30", "--snapshot", "builtin:h200"}, env,
                                std::nullopt, std::nullopt, 20000);
    remover.join();
    ASSERT_EQ(top.exit_code, 0) << top.err;
    const auto last_frame = top.out.rfind("gpupart top");
    ASSERT_NE(last_frame, std::string::npos) << top.out;
    EXPECT_NE(top.out.find("1 simulated process"), std::string::npos) << "the worker was seen first:\n" << top.out;
    EXPECT_NE(top.out.find("is gone", last_frame), std::string::npos) << top.out.substr(last_frame);
}

TEST_F(HostileWrongAnswers, SetRefusesEveryPidThatIsNotPlainDecimalWithOneLine) {
    DemoWorker worker(registry, "target", "gpc0");
    const std::string pid = std::to_string(worker.pid);
    const auto requested = [&] { return nlohmann::json::parse(gpupart({"list", "--json"}, env).out)["processes"][0]["requested"]["tpcs"]; };
    const auto before = requested();
    const std::vector<std::string> refused = {" " + pid, pid + " ", "+" + pid, fmt::format("{:#x}", worker.pid), pid + "abc",
                                              "0" + pid, "", "-1", "0", "4194305", "99999999999999999999"};
    for (const std::string& text : refused) {
        const Outcome set = gpupart({"set", "--snapshot", "builtin:h200", "--", text, "gpc1"}, env);
        EXPECT_EQ(set.exit_code, 1) << "'" << text << "': " << set.out << set.err;
        EXPECT_NE(set.err.find("is not a process id"), std::string::npos) << "'" << text << "': " << set.err;
        EXPECT_EQ(std::count(set.err.begin(), set.err.end(), '\n'), 1) << set.err;
    }
    EXPECT_FALSE(std::filesystem::exists(journal)) << "nothing was applied, so nothing journaled";
    EXPECT_EQ(requested(), before);
    // The same pid written plainly is taken.
    const Outcome set = gpupart({"set", "--snapshot", "builtin:h200", "--", pid, "gpc1"}, env);
    EXPECT_EQ(set.exit_code, 0) << set.err;
}

}  // namespace
}  // namespace gpupart::hostile
