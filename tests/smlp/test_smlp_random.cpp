// The SMLP's pure core under many random schedules: Lemma 13 (satisfied requests hold pairwise disjoint
// TPCs), Lemma 18 (the FQ never longer than M), Rules 1, 2, 4, 5 after every step, FIFO order out of the
// FQ, and no starvation (every request of a finite workload is satisfied).
#include <algorithm>
#include <array>
#include <set>

#include <gtest/gtest.h>

#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

struct Shape {
    uint32_t tpcs;
    uint32_t h;
    uint32_t fq_length;
    bool gpc_map;
};

std::vector<std::vector<uint32_t>> gpcs_of(uint32_t tpcs) {  // GPCs of 3, 5, 4, 6, ... TPCs
    std::vector<std::vector<uint32_t>> gpcs;
    uint32_t next = 0;
    for (uint32_t size = 3; next < tpcs; size = size == 6 ? 3 : size + 1) {
        gpcs.emplace_back();
        for (uint32_t k = 0; k < size && next < tpcs; ++k) gpcs.back().push_back(next++);
    }
    return gpcs;
}

std::vector<int> queue_order(const gpupart_smlp_file& file, uint32_t queue) {
    std::vector<int> order;
    for (int i = 0; i < static_cast<int>(GPUPART_SMLP_MAX_REQUESTS); ++i)
        if (file.requests[i].queue == queue) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return file.requests[a].ticket < file.requests[b].ticket; });
    return order;
}

// Rules 4-5 and Lemmas 13 and 18, checked independently of the core's own validation (which runs too).
void check_invariants(const gpupart_smlp_file& file, const Shape& shape) {
    char why[200] = "";
    ASSERT_EQ(gpupart_smlp_core_validate(&file, why, sizeof why), 0) << why;
    uint32_t held[4] = {0, 0, 0, 0};
    uint32_t held_count = 0;
    for (const gpupart_smlp_request& record : file.requests) {
        if (record.queue != GPUPART_SMLP_SQ) continue;
        for (int w = 0; w < 4; ++w) {
            ASSERT_EQ(record.granted[w] & held[w], 0u) << "Lemma 13: two satisfied requests share a TPC";
            ASSERT_EQ(record.granted[w] & ~file.header.tpcs[w], 0u);
            held[w] |= record.granted[w];
        }
        ASSERT_EQ(record.granted_tpcs % shape.h, 0u);
        held_count += record.granted_tpcs;
    }
    const uint32_t free_count = shape.tpcs - held_count;
    const uint32_t fq = gpupart_smlp_core_count(&file, GPUPART_SMLP_FQ);
    const uint32_t pq = gpupart_smlp_core_count(&file, GPUPART_SMLP_PQ);
    ASSERT_LE(fq, shape.fq_length) << "Lemma 18";
    if (pq > 0) {
        ASSERT_EQ(fq, shape.fq_length) << "Rule 5: the PQ waits only behind a full FQ";
    }
    if (fq > 0) {
        ASSERT_LT(free_count, shape.h) << "Rule 4: the FQ's head waits only while fewer than h are free";
    }
}

class SmlpRandomSchedules : public ::testing::TestWithParam<Shape> {};

TEST_P(SmlpRandomSchedules, RulesAndLemmasHoldAtEveryStep) {
    const Shape shape = GetParam();
    for (uint32_t seed = 0; seed < 60; ++seed) {
        Random random(seed * 7919u + shape.tpcs);
        auto file = make_component(shape.tpcs, shape.h, shape.fq_length,
                                   shape.gpc_map ? gpcs_of(shape.tpcs) : std::vector<std::vector<uint32_t>>{});
        uint64_t now = 1;
        for (int step = 0; step < 400; ++step, ++now) {
            const std::vector<int> fq_before = queue_order(*file, GPUPART_SMLP_FQ);
            const uint32_t action = random() % 100;
            if (action < 45) {
                const uint32_t parallelism = 1 + random() % shape.tpcs;
                const std::vector<uint32_t> levels = step_levels(100 + random() % 10000, parallelism, shape.h, shape.tpcs);
                const uint32_t tolerance = std::array<uint32_t, 3>{0, 10000, 200000}[random() % 3];
                uint32_t free_tpcs[4];
                const uint32_t free_count = gpupart_smlp_core_free_tpcs(file.get(), free_tpcs);
                gpupart_smlp_request expected{};
                std::copy(levels.begin(), levels.end(), expected.levels);
                expected.level_count = static_cast<uint32_t>(levels.size());
                expected.tolerance_ppm = tolerance;
                const uint32_t z = gpupart_smlp_core_z(&expected, shape.h, free_count);
                const int index = issue(*file, 1000 + step, static_cast<int32_t>(random() % 20), levels, now, tolerance);
                if (index == -EBUSY) continue;
                ASSERT_GE(index, 0);
                if (free_count >= shape.h) {  // Rules 1 and 2
                    ASSERT_EQ(file->requests[index].queue, GPUPART_SMLP_SQ);
                    ASSERT_EQ(file->requests[index].granted_tpcs, z);
                } else {
                    ASSERT_NE(file->requests[index].queue, GPUPART_SMLP_SQ);
                }
            } else if (action < 80) {
                const std::vector<int> sq = queue_order(*file, GPUPART_SMLP_SQ);
                if (!sq.empty()) {
                    ASSERT_EQ(gpupart_smlp_core_finalize(file.get(), sq[random() % sq.size()], now), 0);
                }
            } else if (action < 88) {
                std::vector<int> waiting = queue_order(*file, GPUPART_SMLP_PQ);
                for (int i : fq_before) waiting.push_back(i);
                if (!waiting.empty()) {
                    ASSERT_EQ(gpupart_smlp_core_withdraw(file.get(), waiting[random() % waiting.size()], now), 0);
                }
            } else if (action < 95) {
                const uint64_t dead = (uint64_t{random()} << 32 | random()) & (uint64_t{random()} << 32 | random());
                gpupart_smlp_core_drop(file.get(), dead, now);
            } else {
                ASSERT_EQ(gpupart_smlp_core_repair(file.get(), now), 0) << "nothing to repair in a consistent file";
            }
            check_invariants(*file, shape);
            // FIFO: no record still in the FQ was passed by one that entered the SQ from behind it.
            bool waiting_seen = false;
            for (int i : fq_before) {
                if (file->requests[i].queue == GPUPART_SMLP_FQ) {
                    waiting_seen = true;
                } else if (file->requests[i].queue == GPUPART_SMLP_SQ) {
                    ASSERT_FALSE(waiting_seen) << "FQ order broken";
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SmlpRandomSchedules,
                         ::testing::Values(Shape{3, 1, 2, false}, Shape{8, 1, 3, true}, Shape{12, 2, 4, true},
                                           Shape{18, 3, 1, false}, Shape{66, 1, 8, true}, Shape{128, 2, 16, false}),
                         [](const ::testing::TestParamInfo<Shape>& shape_info) {
                             const Shape& s = shape_info.param;
                             return "H" + std::to_string(s.tpcs) + "_h" + std::to_string(s.h) + "_M" +
                                    std::to_string(s.fq_length) + (s.gpc_map ? "_gpcs" : "");
                         });

// A finite workload: requests arrive while holders finalize in random order; then everything drains.
// Every request must have been satisfied exactly once (no starvation).
TEST(SmlpRandom, EveryRequestOfAFiniteWorkloadIsSatisfied) {
    for (uint32_t seed = 0; seed < 20; ++seed) {
        Random random(seed);
        const Shape shape{16, 2, 3, seed % 2 == 0};
        auto file = make_component(shape.tpcs, shape.h, shape.fq_length,
                                   shape.gpc_map ? gpcs_of(shape.tpcs) : std::vector<std::vector<uint32_t>>{});
        std::array<int64_t, GPUPART_SMLP_MAX_REQUESTS> id_of{};
        id_of.fill(-1);
        std::set<int64_t> satisfied;
        int64_t issued = 0;
        uint64_t now = 1;
        const auto note_satisfied = [&] {
            for (unsigned i = 0; i < GPUPART_SMLP_MAX_REQUESTS; ++i)
                if (file->requests[i].queue == GPUPART_SMLP_SQ && id_of[i] >= 0) satisfied.insert(id_of[i]);
        };
        while (issued < 3000 || gpupart_smlp_core_count(file.get(), GPUPART_SMLP_FREE) < GPUPART_SMLP_MAX_REQUESTS) {
            ++now;
            const bool arrive = issued < 3000 && random() % 100 < 55;
            if (arrive) {
                const std::vector<uint32_t> levels = step_levels(1000, 1 + random() % shape.tpcs, shape.h, shape.tpcs);
                const int index = issue(*file, 1, static_cast<int32_t>(random() % 10), levels, now);
                if (index >= 0) id_of[index] = issued++;
            } else {
                const std::vector<int> sq = queue_order(*file, GPUPART_SMLP_SQ);
                if (!sq.empty()) {
                    const int index = sq[random() % sq.size()];
                    ASSERT_EQ(gpupart_smlp_core_finalize(file.get(), index, now), 0);
                    id_of[index] = -1;
                }
            }
            note_satisfied();
            check_invariants(*file, shape);
            ASSERT_LT(now, 100000u) << "the workload does not drain";
        }
        EXPECT_EQ(issued, 3000);
        EXPECT_EQ(satisfied.size(), 3000u) << "seed " << seed;
        EXPECT_EQ(file->header.satisfied, 3000u);
        EXPECT_EQ(file->header.finalized, 3000u);
    }
}

}  // namespace
