// Hostile files, killed writers: a writer killed at any store of a change must not wedge the process. Each test
// kills a real `set` (the controller's compare-and-set path, in a forked process) with SIGKILL right
// before one store of the slot write, then checks, through a fresh controller, that the process still
// has its partition (check/state see it), that the next set applies and that undo works.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>

#include <sys/wait.h>
#include <unistd.h>

#include "controller_test_fixture.hpp"
#include "registry/registry.hpp"
#include "registry/slot_file.hpp"

namespace gpupart::test {
namespace {

int g_kill_at = -1;  // the store a forked writer dies at (a hook cannot capture)

// Runs `set PID EXPR` through the controller in a child that SIGKILLs itself before store `kill_at`.
// Returns how the child ended: true when it was killed (it reached that store).
bool set_and_die_at(const ControllerFixture& fixture, int pid, const std::string& expression, int kill_at) {
    const pid_t writer = ::fork();
    if (writer == 0) {
        g_kill_at = kill_at;
        SlotFile::set_store_hook_for_test([](int store) {
            if (store == g_kill_at) ::raise(SIGKILL);
        });
        try {
            Controller controller = fixture.make();
            const Plan plan = controller.plan_set({{pid, expression}}, "set " + expression);
            controller.apply(plan);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "writer: %s\n", error.what());
            ::_exit(2);
        }
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(writer, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

struct HostileKilledWriter : ControllerFixture, ::testing::WithParamInterface<int> {};

TEST_P(HostileKilledWriter, TheNextSetAndUndoWorkAfterAWriterDiesAtThisStore) {
    const int store = GetParam();
    RegisteredChild child(registry_dir.dir, "0xf");  // TPCs 0-3
    const std::string gpc2 = make().plan_set({{child.pid, "gpc2"}}, "set gpc2").changes.at(0).after.to_list();
    if (store <= 1) {
        // Stores 0-1 restore a dead writer's saved block: first leave one (killed before store 4, the
        // payload, so after store 3 made seq odd).
        ASSERT_TRUE(set_and_die_at(*this, child.pid, "gpc1", 4));
    }
    ASSERT_TRUE(set_and_die_at(*this, child.pid, "gpc2", store)) << "the writer never reached store " << store;

    // The process is seen with a partition: the one before the dead change (or the dead change itself
    // when it was completed before the kill), never "no partition".
    Controller controller = make();
    const auto record = Registry(registry_dir.dir).find_live(child.pid);
    ASSERT_TRUE(record.control.has_value()) << "a dead writer made the partition unreadable";
    EXPECT_TRUE(test::has_mask_on(*record.control));
    const std::string before = test::allowed_on(*record.control).to_list();
    EXPECT_TRUE(before == "0-3" || before == gpc2) << before;

    // The next set goes through the controller's compare-and-set and applies.
    const Plan plan = controller.plan_set({{child.pid, "gpc6"}}, "set gpc6");
    ASSERT_FALSE(plan.refused());
    controller.apply(plan);
    EXPECT_EQ(mask_of(child.pid), "54-62");
    const auto after = Registry(registry_dir.dir).find_live(child.pid);
    EXPECT_FALSE(after.writer_died);
    // And undo puts back what the process had before it.
    controller.apply(controller.plan_undo());
    EXPECT_EQ(mask_of(child.pid), before);
}

// Stores 0-1: completing a dead writer's change; 2: saving the block; 3: seq odd; 4: the payload;
// 5: seq even (registry_layout.h, SlotFile::write_control).
INSTANTIATE_TEST_SUITE_P(EveryStore, HostileKilledWriter, ::testing::Values(0, 1, 2, 3, 4, 5));

}  // namespace
}  // namespace gpupart::test
