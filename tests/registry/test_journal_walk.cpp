// A journaled walk (gpupart measure): one journal entry for the walk's first mask, the later
// masks written by the same gpupart without entries, and an undo that puts back the TPCs from before the
// walk whether the walk ended normally or its gpupart was killed, but never over someone else's change.
#include <gtest/gtest.h>

#include <unistd.h>

#include "controller/controller.hpp"
#include "controller_test_fixture.hpp"
#include "model/tpc_numbering.hpp"
#include "registry_test_support.hpp"

using namespace gpupart;
using gpupart::test::kTestGpu;
using gpupart::test::RegisteredChild;

namespace {

struct JournalWalkTest : gpupart::test::ControllerFixture {
    // The walk's first step, journaled with `writes` later writes allowed to `writer`.
    JournalEntry start_walk(Controller& controller, int pid, const char* first, int writer, std::uint64_t writes) {
        controller.refresh();
        Plan plan = controller.plan_set({{pid, first}}, "measure (walk)");
        plan.walk = JournalWalk{writer, writes};
        return controller.apply(plan).entry;
    }
    // A later step, written as the walk writes them: straight to the slot, compare-and-set, in TPC numbers.
    // Named here by descriptor bits (holes dropped), so that mask_of (the slot's bits) can be checked after.
    void step(int pid, int first_bit, int last_bit) {
        const Registry registry = numbered_registry();
        const auto record = registry.find_live(pid);
        const TpcMask numbers = TpcNumbering::of(gpupart::test::builtin_h200()).to_numbers(TpcMask::range(first_bit, last_bit));
        registry.set_mask(pid, kTestGpu, true, numbers, TpcMask::range(0, 65), {record.start_time, record.control->generation});
    }
};

}  // namespace

TEST_F(JournalWalkTest, TheWalkIsJournaledWithItsWriterAndReadBack) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    const JournalEntry entry = start_walk(controller, child.pid, "gpc0-3", ::getpid(), 5);
    ASSERT_TRUE(entry.walk.has_value());
    const auto entries = Journal(journal_path).read();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].walk, (JournalWalk{::getpid(), 5}));
    EXPECT_EQ(entries[0], entry);
}

TEST_F(JournalWalkTest, UndoPutsBackTheTpcsFromBeforeAKilledWalk) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    start_walk(controller, child.pid, "gpc0-3", ::getpid(), 3);
    step(child.pid, 0, 20);
    step(child.pid, 0, 3);  // the walk's gpupart dies here: no entry after the first
    controller.refresh();
    const Plan undo = controller.plan_undo();
    ASSERT_FALSE(undo.refused()) << undo.findings.at(0).message;
    controller.apply(undo);
    EXPECT_EQ(mask_of(child.pid), "0-3");
    EXPECT_FALSE(Journal(journal_path).last_undoable().has_value());  // the walk is undone: nothing left
}

TEST_F(JournalWalkTest, AWalkOnlyCoversItsOwnWritesAndNoMoreThanItSaid) {
    RegisteredChild child(registry_dir.dir, "0xf");
    Controller controller = make();
    // Written by a writer that is not the walk's: someone else's change, which undo must not overwrite.
    start_walk(controller, child.pid, "gpc0-3", ::getpid() + 1, 3);
    step(child.pid, 0, 20);
    controller.refresh();
    Plan undo = controller.plan_undo();
    ASSERT_TRUE(undo.refused());
    EXPECT_NE(undo.findings.at(0).message.find("was changed again since #1"), std::string::npos);

    RegisteredChild other(registry_dir.dir, "0xf");
    start_walk(controller, other.pid, "gpc1", ::getpid(), 1);
    step(other.pid, 9, 12);
    step(other.pid, 9, 10);  // one write more than the walk announced
    controller.refresh();
    undo = controller.plan_undo();
    ASSERT_TRUE(undo.refused());
    EXPECT_EQ(mask_of(other.pid), "9-10");
}

TEST_F(JournalWalkTest, AWalkEndsByUndoingItsEntryWhateverWasJournaledSince) {
    RegisteredChild walked(registry_dir.dir, "0xf");
    RegisteredChild other(registry_dir.dir, "0xf");
    Controller controller = make();
    const JournalEntry walk = start_walk(controller, walked.pid, "gpc0-3", ::getpid(), 2);
    step(walked.pid, 0, 8);
    controller.apply(controller.plan_set({{other.pid, "gpc6"}}, "set gpc6"));  // the user, meanwhile
    controller.refresh();
    const Plan end = controller.plan_undo_of(walk.id);
    ASSERT_FALSE(end.refused()) << end.findings.at(0).message;
    controller.apply(end);
    EXPECT_EQ(mask_of(walked.pid), "0-3");
    EXPECT_EQ(mask_of(other.pid), "54-62");
    // The user's own change is still the one undo reverts next; the walk cannot be ended twice.
    EXPECT_EQ(Journal(journal_path).last_undoable()->action, "set gpc6");
    EXPECT_THROW(controller.plan_undo_of(walk.id), UserError);
    EXPECT_THROW(controller.plan_undo_of(99), UserError);
}
