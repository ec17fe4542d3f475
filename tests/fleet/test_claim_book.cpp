// Claim-to-mask on the recorded H200 (fleet/claim_book.hpp): GPC-packed, disjoint across claims, idempotent per
// claim uid (a kubelet retry), released, and refused in one line when it does not fit.
#include <gtest/gtest.h>

#include <functional>

#include "fleet/claim_book.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

ClaimBook empty_book() { return ClaimBook(gpu_key(h200()), real_tpcs(h200())); }

ClaimRequest tpcs(std::string uid, int count, std::string ns = "inference") {
    return ClaimRequest{std::move(uid), std::move(ns), "", ClaimUnit::tpcs, count};
}
ClaimRequest gpcs(std::string uid, int count) { return ClaimRequest{std::move(uid), "training", "", ClaimUnit::gpcs, count}; }

std::string message_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const UserError& error) {
        return error.what();
    }
    return "(no error)";
}

constexpr const char* kNow = "2026-11-24T10:00:00Z";

}  // namespace

TEST(ClaimBook, FirstClaimIsGpcPacked) {
    ClaimBook book = empty_book();
    const auto prepared = book.prepare(h200(), tpcs("a1", 16), kNow);
    EXPECT_FALSE(prepared.already);
    // gpc0 + gpc1 whole (test_placement_exact), in TPC numbers: gpc0 is 0,8,16,24,62-65, gpc1 1,9,17,25,32,39,46,53
    EXPECT_EQ(prepared.claim.tpcs.to_list(), "0-1,8-9,16-17,24-25,32,39,46,53,62-65");
    EXPECT_EQ(prepared.claim.tpcs, gpc_tpcs(h200(), 0) | gpc_tpcs(h200(), 1));
    EXPECT_EQ(gpcs_fully_covered(h200(), prepared.claim.tpcs).size(), 2u);
    EXPECT_EQ(prepared.claim.job, "k8s:inference/a1");
    EXPECT_EQ(prepared.claim.prepared, kNow);
}

TEST(ClaimBook, ClaimsNeverShareATpcAndFillTheGpu) {
    ClaimBook book = empty_book();
    const std::vector<int> sizes = {16, 9, 7, 1, 12, 8, 4, 9};  // 66 in all
    TpcMask seen;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const Claim claim = book.prepare(h200(), tpcs("c" + std::to_string(i), sizes[i]), kNow).claim;
        EXPECT_EQ(claim.tpcs.count(), sizes[i]) << i;
        EXPECT_TRUE((claim.tpcs & seen).empty()) << "claim " << i << " overlaps: " << (claim.tpcs & seen).to_list();
        EXPECT_TRUE((claim.tpcs & ~real_tpcs(h200())).empty()) << "claim " << i << " holds a hole";
        seen |= claim.tpcs;
    }
    EXPECT_EQ(seen, real_tpcs(h200()));
    EXPECT_TRUE(book.free().empty());
    // The 9 after the 16 is one whole GPC of 9 (gpc6), not parts of two.
    EXPECT_EQ(book.find("c1")->tpcs, gpc_tpcs(h200(), 6));
}

TEST(ClaimBook, PreparingAgainIsARetryThatChangesNothing) {
    ClaimBook book = empty_book();
    const Claim first = book.prepare(h200(), tpcs("retry", 20), kNow).claim;
    book.prepare(h200(), tpcs("other", 10), kNow);
    const auto again = book.prepare(h200(), tpcs("retry", 20), "2026-11-24T11:00:00Z");
    EXPECT_TRUE(again.already);
    EXPECT_EQ(again.claim, first);  // same TPCs, same time of first preparation
    EXPECT_EQ(book.claims().size(), 2u);
}

TEST(ClaimBook, TheSameUidWithAnotherRequestIsRefused) {
    ClaimBook book = empty_book();
    book.prepare(h200(), tpcs("u1", 8), kNow);
    const ClaimBook before = book;
    EXPECT_EQ(message_of([&] { book.prepare(h200(), tpcs("u1", 9), kNow); }),
              "claim u1 is already prepared on " + gpu_key(h200()) +
                  " with 8 tpcs in namespace inference; it asks 9 TPCs in namespace inference now: unprepare it first; "
                  "nothing changed");
    EXPECT_THROW(book.prepare(h200(), gpcs("u1", 1), kNow), UserError);
    EXPECT_THROW(book.prepare(h200(), tpcs("u1", 8, "elsewhere"), kNow), UserError);
    EXPECT_EQ(book.claims(), before.claims());
}

TEST(ClaimBook, ARequestBeyondTheFreeTpcsDoesNotFitAndChangesNothing) {
    ClaimBook book = empty_book();
    book.prepare(h200(), tpcs("big", 60), kNow);
    const auto claims = book.claims();
    const std::string message = message_of([&] { book.prepare(h200(), tpcs("late", 10), kNow); });
    EXPECT_NE(message.find("claim late asks 10 TPCs; 6 of the 66 TPCs of GPU 0"), std::string::npos) << message;
    EXPECT_NE(message.find("it does not fit now; nothing changed"), std::string::npos) << message;
    EXPECT_EQ(book.claims(), claims);
    // Exactly what is free still fits.
    EXPECT_EQ(book.prepare(h200(), tpcs("late", 6), kNow).claim.tpcs, real_tpcs(h200()) & ~book.find("big")->tpcs);
}

TEST(ClaimBook, MoreThanTheGpuHasCanNeverFit) {
    ClaimBook book = empty_book();
    EXPECT_NE(message_of([&] { book.prepare(h200(), tpcs("huge", 67), kNow); }).find("has 66: it can never fit"),
              std::string::npos);
    EXPECT_NE(message_of([&] { book.prepare(h200(), gpcs("huge", 9), kNow); }).find("has 8: it can never fit"),
              std::string::npos);
    EXPECT_THROW(book.prepare(h200(), tpcs("zero", 0), kNow), UserError);
    EXPECT_TRUE(book.claims().empty());
}

TEST(ClaimBook, ReleaseFreesTheTpcsAndRepreparingGivesThemBack) {
    ClaimBook book = empty_book();
    const TpcMask first = book.prepare(h200(), tpcs("a", 17), kNow).claim.tpcs;
    book.prepare(h200(), tpcs("b", 30), kNow);
    const auto released = book.release("a");
    ASSERT_TRUE(released.has_value());
    EXPECT_EQ(released->tpcs, first);
    EXPECT_TRUE((book.held() & first).empty());
    EXPECT_FALSE(book.release("a").has_value());  // a second unprepare is no error
    EXPECT_EQ(book.prepare(h200(), tpcs("a", 17), kNow).claim.tpcs, first);
}

TEST(ClaimBook, TheSameHistoryGivesTheSameMasks) {
    ClaimBook one = empty_book();
    ClaimBook two = empty_book();
    for (ClaimBook* book : {&one, &two}) {
        book->prepare(h200(), tpcs("x", 5), kNow);
        book->prepare(h200(), gpcs("y", 2), kNow);
        book->release("x");
        book->prepare(h200(), tpcs("z", 11), kNow);
    }
    EXPECT_EQ(one.claims(), two.claims());
}

TEST(ClaimBook, WholeGpcsAreWhollyFreeOnesSmallestFirst) {
    ClaimBook book = empty_book();
    const Claim two = book.prepare(h200(), gpcs("g2", 2), kNow).claim;
    EXPECT_EQ(two.tpcs, gpc_tpcs(h200(), 0) | gpc_tpcs(h200(), 1));  // 8-TPC GPCs before the 9-TPC gpc6 and gpc7
    EXPECT_EQ(two.count, 2);
    book.prepare(h200(), tpcs("one", 1), kNow);  // breaks a GPC: it is no longer wholly free
    const std::string message = message_of([&] { book.prepare(h200(), gpcs("g6", 6), kNow); });
    EXPECT_NE(message.find("claim g6: 6 whole GPCs asked; 5 of the 8 GPCs of NVIDIA H200 are wholly free"),
              std::string::npos) << message;
    const Claim rest = book.prepare(h200(), gpcs("g5", 5), kNow).claim;
    EXPECT_EQ(gpcs_fully_covered(h200(), rest.tpcs).size(), 5u);
    EXPECT_TRUE((rest.tpcs & book.find("one")->tpcs).empty());
}

TEST(ClaimBook, AnotherGpuOrFloorsweepingIsRefused) {
    ClaimBook book(gpu_key(h200()), real_tpcs(h200()) & ~TpcMask::range(0, 0));
    EXPECT_NE(message_of([&] { book.prepare(h200(), tpcs("a", 1), kNow); }).find("its floorsweeping changed"),
              std::string::npos);
    ClaimBook other("GPU-11111111-2222-3333-4444-555555555555", real_tpcs(h200()));
    EXPECT_THROW(other.prepare(h200(), tpcs("a", 1), kNow), UserError);
}

TEST(ClaimBook, RecordedClaimsThatCannotAllBeTrueAreRefused) {
    const auto claim = [](std::string uid, TpcMask mask) {
        return Claim{uid, "ns", "", ClaimUnit::tpcs, mask.count(), mask, claim_job("ns", uid), kNow};
    };
    const std::string key = gpu_key(h200());
    const TpcMask real = real_tpcs(h200());
    EXPECT_NO_THROW(ClaimBook(key, real, {claim("a", TpcMask::range(0, 3)), claim("b", TpcMask::range(9, 12))}));
    EXPECT_EQ(message_of([&] { ClaimBook(key, real, {claim("a", TpcMask::range(0, 3)), claim("b", TpcMask::range(3, 3) | TpcMask::range(9, 9))}); }),
              "claim b shares TPCs 3 with another claim");
    EXPECT_EQ(message_of([&] { ClaimBook(key, real, {claim("a", TpcMask::range(0, 1)), claim("a", TpcMask::range(9, 9))}); }),
              "claim a is recorded twice");
    EXPECT_EQ(message_of([&] { ClaimBook(key, real, {claim("a", TpcMask{})}); }), "claim a holds no TPC");
    EXPECT_NE(message_of([&] { ClaimBook(key, real, {claim("a", TpcMask::range(64, 68))}); }).find("holds TPCs 66-68, which are not real TPCs"),
              std::string::npos);  // the H200 has TPCs 0-65: 66-68 are none of its
    EXPECT_THROW(ClaimBook(key, real, {claim("../etc", TpcMask::range(0, 0))}), UserError);
}

TEST(ClaimNames, OnlyWhatKubernetesAllowsGetsThrough) {
    EXPECT_NO_THROW(check_claim_uid("3f6c1a9e-6f7b-4c1d-9a55-0c2d1e4b8a77"));
    for (const char* bad : {"", "-a", "a/b", "../x", "a b", "a\x1b[31m", "a.b"}) EXPECT_THROW(check_claim_uid(bad), UserError) << bad;
    EXPECT_THROW(check_claim_uid(std::string(65, 'a')), UserError);
    EXPECT_NO_THROW(check_claim_namespace("kube-system"));
    for (const char* bad : {"", "Default", "-x", "x-", "a.b", "a_b"}) EXPECT_THROW(check_claim_namespace(bad), UserError) << bad;
    EXPECT_THROW(check_claim_namespace(std::string(64, 'a')), UserError);
    EXPECT_NO_THROW(check_claim_name(""));
    EXPECT_NO_THROW(check_claim_name("llm.tpcs-16"));
    for (const char* bad : {"a..b", ".a", "A", "a/b"}) EXPECT_THROW(check_claim_name(bad), UserError) << bad;
    // The uid's message shows hostile text escaped, never raw.
    EXPECT_EQ(message_of([] { check_claim_uid("a\x1b[2J"); }).find('\x1b'), std::string::npos);
}

TEST(ClaimNames, TheJobFitsTheSlotHeader) {
    const std::string uid = "3f6c1a9e-6f7b-4c1d-9a55-0c2d1e4b8a77";
    EXPECT_EQ(claim_job("inference", uid), "k8s:inference/" + uid);
    EXPECT_EQ(claim_job(std::string(22, 'n'), uid).size(), kJobMaxBytes);  // the longest namespace kept
    EXPECT_EQ(claim_job(std::string(23, 'n'), uid), "k8s:" + uid);
    EXPECT_EQ(claim_job(std::string(63, 'n'), uid), "k8s:" + uid);
}
