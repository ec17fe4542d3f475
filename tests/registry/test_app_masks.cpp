// The masks a program chooses itself (the slot's app block, registry layout 5), read by the front ends'
// registry layer from real slots of real registered processes: converted from libsmctrl's disable masks
// to allowed sets, combined with the operator's mask (docs/registry-layout-5.md, decision 2), hostile
// counts clamped, a writer that never finishes survived, and no torn block under a busy writer.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

#include "controller/system_state.hpp"
#include "model/gpu_queries.hpp"
#include "registry/registry.hpp"
#include "registry/registry_seqlock.h"
#include "registry_test_support.hpp"
#include "smlp_fixture.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using gpupart::test::FixtureAppMasks;
using gpupart::test::MappedSlot;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;

namespace {

std::string slot_of(const Registry& registry, int pid) {
    for (const RegistryEntry& entry : registry.list())
        if (entry.record && entry.record->pid == pid) return entry.path;
    throw std::runtime_error("no slot for the child");
}

const TpcMask kAll = ~TpcMask{};

}  // namespace

TEST(AppMasks, AProgramsMasksAreReadAsAllowedSets) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xffff");  // the operator's bound: TPCs 0-15
    const Registry registry(registry_dir.dir);
    const std::string path = slot_of(registry, child.pid);
    {
        MappedSlot mapped(path, true);
        FixtureAppMasks masks;
        masks.global_set = true;
        masks.global_allowed = TpcMask::range(0, 7);
        masks.streams = {{0, TpcMask::range(0, 3), 10}, {0x7f3a1c000b20ull, TpcMask::range(4, 23), 20}};
        masks.app_launches = 30;
        masks.next_launches = 2;
        masks.outside_bound = 1;
        test::write_app_masks(mapped.slot->app, masks);
    }
    const SlotRecord record = SlotFile::open(path, false).read();
    const SlotAppMasks& app = record.app;
    EXPECT_TRUE(app.in_use);
    EXPECT_FALSE(app.publishing);
    EXPECT_EQ(app.problem, "");
    ASSERT_TRUE(app.global_set);
    EXPECT_EQ(app.global_allowed(), TpcMask::range(0, 7));
    EXPECT_EQ(app.global_disable, ~TpcMask::range(0, 7));  // as libsmctrl stores it
    ASSERT_EQ(app.streams.size(), 2u);
    EXPECT_EQ(app.streams[0].stream, 0u);
    EXPECT_EQ(app.streams[0].allowed(), TpcMask::range(0, 3));
    EXPECT_EQ(app.streams[0].launches, 10u);
    EXPECT_EQ(app.streams[1].stream, 0x7f3a1c000b20ull);
    EXPECT_EQ(app.streams[1].allowed(), TpcMask::range(4, 23));
    EXPECT_EQ(app.app_launches, 30u);
    EXPECT_EQ(app.next_launches, 2u);
    EXPECT_EQ(app.outside_bound, 1u);

    // Under the operator's 0-15: each choice as the library runs it.
    const auto bound = std::optional<TpcMask>(TpcMask::range(0, 15));
    const auto rows = app_mask_rows(app, bound, std::nullopt);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(app_mask_row_text(rows[0], std::nullopt), "global 0-7 → 0-7");
    EXPECT_EQ(app_mask_row_text(rows[1], std::nullopt), "stream default 0-3 → 0-3 · 10 launches");
    EXPECT_EQ(app_mask_row_text(rows[2], std::nullopt), "stream 0x7f3a1c000b20 4-23 → 4-15 · 20 launches");
    EXPECT_EQ(app_masks_summary(app, std::nullopt),
              "global 0-7 · 2 stream masks · 30 launches chose their mask (1 outside the operator's mask)");

    // The controller's process view carries them to every front end.
    const Gpu gpu = load_snapshot("builtin:h200").gpus.at(0);
    const SystemState state = gather_state(registry, gpu);
    const ProcessState* process = find_process(state, child.pid);
    ASSERT_NE(process, nullptr);
    EXPECT_TRUE(process->app.in_use);
    EXPECT_EQ(process->app.streams.size(), 2u);
}

TEST(AppMasks, AProcessThatNeverUsedTheApiShowsNothing) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xff");
    const SlotRecord record = SlotFile::open(slot_of(Registry(registry_dir.dir), child.pid), false).read();
    EXPECT_FALSE(record.app.in_use);
    EXPECT_TRUE(record.app.streams.empty());
    EXPECT_EQ(app_masks_summary(record.app, std::nullopt), "");
    EXPECT_TRUE(app_mask_rows(record.app, std::nullopt, std::nullopt).empty());
}

// Blocks say whether their masks are TPC numbers (shims since the numbering) or descriptor bits (older
// shims, a flag never set), and count launches on GPUs without a GPC map in what was a reserved field.
TEST(AppMasks, TheBlockSaysItsNumberingAndCountsUnmappedLaunches) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xff");
    const std::string path = slot_of(Registry(registry_dir.dir), child.pid);
    {
        MappedSlot mapped(path, true);
        test::write_app_masks(mapped.slot->app, FixtureAppMasks{});
    }
    SlotRecord record = SlotFile::open(path, false).read();
    EXPECT_FALSE(record.app.numbered);
    EXPECT_EQ(record.app.unmapped_launches, 0u);
    {
        MappedSlot mapped(path, true);
        __atomic_or_fetch(&mapped.slot->app.flags, GPUPART_APP_NUMBERED, __ATOMIC_RELEASE);
        __atomic_store_n(&mapped.slot->app.unmapped_launches, 7u, __ATOMIC_RELAXED);
    }
    record = SlotFile::open(path, false).read();
    EXPECT_TRUE(record.app.numbered);
    EXPECT_EQ(record.app.unmapped_launches, 7u);
}

TEST(AppMasks, AStreamCountBeyondTheSlotIsClampedAndSaid) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xff");
    const std::string path = slot_of(Registry(registry_dir.dir), child.pid);
    {
        MappedSlot mapped(path, true);
        FixtureAppMasks masks;
        for (std::uint64_t s = 1; s <= 64; ++s) masks.streams.push_back({s << 12, TpcMask::range(0, 1), s});
        masks.stream_count_override = 4000000000u;
        test::write_app_masks(mapped.slot->app, masks);
    }
    const SlotRecord record = SlotFile::open(path, false).read();
    EXPECT_EQ(record.app.streams.size(), GPUPART_APP_STREAMS);
    EXPECT_EQ(record.app.problem,
              "the program's mask block says 4000000000 streams, more than the 64 a slot holds: the first 64 are shown");
}

TEST(AppMasks, AWriterThatNeverFinishedLeavesTheMasksUnknownNotTorn) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xff");
    const std::string path = slot_of(Registry(registry_dir.dir), child.pid);
    {
        MappedSlot mapped(path, true);
        FixtureAppMasks masks;
        masks.global_set = true;
        masks.global_allowed = TpcMask::range(0, 1);
        masks.app_launches = 7;
        test::write_app_masks(mapped.slot->app, masks);
        gpupart_seq_write_begin(&mapped.slot->app.seq);  // killed in the middle of its next change
    }
    const SlotRecord record = SlotFile::open(path, false).read();  // returns (bounded retries)
    EXPECT_TRUE(record.app.in_use);
    EXPECT_TRUE(record.app.publishing);
    EXPECT_FALSE(record.app.global_set);
    EXPECT_EQ(record.app.app_launches, 7u);  // the counters are outside the seqlock
    EXPECT_EQ(app_masks_summary(record.app, std::nullopt), "masks being written · 7 launches chose their mask");
    // The rest of the slot is read as usual.
    ASSERT_TRUE(record.control.has_value());
    EXPECT_TRUE(test::has_mask_on(*record.control));
}

// A writer changes the block as fast as it can, every change keeping one rule (the global mask and every
// stream mask allow the same single TPC, stream_count = that TPC's bit % 65); a reader that ever sees the
// rule broken saw a torn block.
TEST(AppMasks, ABusyWriterNeverShowsATornBlock) {
    TempRegistry registry_dir;
    RegisteredChild child(registry_dir.dir, "0xff");
    const std::string path = slot_of(Registry(registry_dir.dir), child.pid);
    const pid_t writer = ::fork();
    if (writer == 0) {
        MappedSlot mapped(path, true);
        for (std::uint64_t i = 0;; ++i) {
            if (i % 256 == 255) ::usleep(200);  // lets a reader on a loaded machine copy a whole block now and then
            const int bit = static_cast<int>(i % 128);
            FixtureAppMasks masks;
            masks.global_set = true;
            TpcMask one;
            one.set(bit);
            masks.global_allowed = one;
            for (int s = 0; s < bit % 65; ++s) masks.streams.push_back({static_cast<std::uint64_t>(s + 1), one, i});
            masks.app_launches = i;
            test::write_app_masks(mapped.slot->app, masks);
        }
    }
    const test::KilledAtExit stop(writer);
    ASSERT_TRUE(test::wait_for_writes(path, offsetof(gpupart_slot_file, app) + offsetof(gpupart_app_masks, seq), 10));
    const SlotFile slot = SlotFile::open(path, false);
    std::set<int> seen;  // the writer really changed the block under the reads
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int read = 0; read < 3000 || (seen.size() < 2 && std::chrono::steady_clock::now() < deadline); ++read) {
        const SlotAppMasks app = slot.read().app;
        if (app.publishing || !app.global_set) continue;
        const TpcMask global = app.global_allowed();
        ASSERT_EQ(global.count(), 1) << "read " << read;
        const int bit = global.bits().front();
        seen.insert(bit);
        ASSERT_EQ(app.streams.size(), static_cast<std::size_t>(bit % 65)) << "read " << read;
        for (const AppStreamMask& stream : app.streams) ASSERT_EQ(stream.allowed(), global) << "read " << read;
    }
    EXPECT_GT(seen.size(), 1u);
}

TEST(AppMasks, TheProgramsChoiceRunsInsideTheOperatorsMask) {
    const TpcMask real = TpcMask::range(0, 65);
    // Inside the bound: the intersection.
    EffectiveTpcs e = effective_tpcs(TpcMask::range(0, 7), TpcMask::range(4, 15), real);
    EXPECT_EQ(e.tpcs, TpcMask::range(4, 7));
    EXPECT_FALSE(e.outside_bound);
    // Nothing inside the bound: the operator's mask alone, counted as outside.
    e = effective_tpcs(TpcMask::range(0, 3), TpcMask::range(8, 15), real);
    EXPECT_EQ(e.tpcs, TpcMask::range(8, 15));
    EXPECT_TRUE(e.outside_bound);
    // No operator mask: the program's choice alone, within the real TPCs.
    e = effective_tpcs(TpcMask::range(60, 80), std::nullopt, real);
    EXPECT_EQ(e.tpcs, TpcMask::range(60, 65));
    // A choice of holes only, no operator mask: every TPC (never a kernel that cannot run).
    e = effective_tpcs(TpcMask::range(100, 101), std::nullopt, real);
    EXPECT_EQ(e.tpcs, real);
    EXPECT_TRUE(e.outside_bound);
    // libsmctrl's `~allowed` idiom in an _ext mask: ~0x1 allows TPC 0 only, set_global_mask_ext(0) every TPC.
    const TpcMask only_zero = ~TpcMask::from_words(~std::uint64_t{1}, ~std::uint64_t{0});
    EXPECT_EQ(effective_tpcs(only_zero, std::nullopt, real).tpcs, TpcMask::range(0, 0));
    EXPECT_EQ(effective_tpcs(~TpcMask{}, std::nullopt, real).tpcs, real);
}

TEST(AppMasks, AllowedSetsAreSaidAsGpupartSaysMasks) {
    EXPECT_EQ(allowed_text(kAll, std::nullopt), "all");
    EXPECT_EQ(allowed_text(~TpcMask::range(3, 3), std::nullopt), "all but 3");
    EXPECT_EQ(allowed_text(TpcMask::range(0, 7), std::nullopt), "0-7");
    EXPECT_EQ(allowed_text(TpcMask{}, std::nullopt), "(none)");
    EXPECT_EQ(allowed_text(~TpcMask::range(3, 3), TpcMask::range(0, 7)), "0-2,4-7");  // real TPCs known
    EXPECT_EQ(allowed_text(TpcMask::range(100, 101), TpcMask::range(0, 7)), "(none)");
    EXPECT_EQ(stream_text(0), "default");
    EXPECT_EQ(stream_text(0x7f3a1c000b20ull), "0x7f3a1c000b20");
}
