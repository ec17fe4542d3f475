// Every controller rule on a hand-made system state over the built-in H200 (no processes needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "controller/rules.hpp"
#include "controller/rules_doc.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

ProcessState process(int pid, const TpcMask& mask, bool partitioned = true, unsigned uid = 1000) {
    ProcessState p;
    p.pid = pid;
    p.start_time = 100;
    p.uid = uid;
    p.command = "worker";
    p.partitioned = partitioned;
    p.mask = mask;
    p.generation = 1;
    return p;
}

SystemState state_with(std::vector<ProcessState> processes, bool mps = true) {
    SystemState state;
    state.gpu = h200();
    state.processes = std::move(processes);
    state.mps_running = mps;
    state.caller_uid = 1000;
    return state;
}

PlannedChange change_of(const ProcessState& p, const TpcMask& after) {
    PlannedChange c;
    c.pid = p.pid;
    c.start_time = p.start_time;
    c.uid = p.uid;
    c.command = p.command;
    c.before_partitioned = p.partitioned;
    c.before = p.mask;
    c.before_generation = p.generation;
    c.after = after;
    return c;
}

// A copy, so it may be called on a temporary list of findings.
std::optional<Finding> find_rule(const std::vector<Finding>& findings, const std::string& rule, Severity severity) {
    auto it = std::find_if(findings.begin(), findings.end(),
                           [&](const Finding& f) { return f.rule == rule && f.severity == severity; });
    if (it == findings.end()) return std::nullopt;
    return *it;
}

TpcMask numbers(std::initializer_list<int> list) {
    TpcMask mask;
    for (const int n : list) mask.set(n);
    return mask;
}

// The H200's gpc1 and gpc6 in TPC numbers (descriptor bits 9-16 and 54-62).
const TpcMask kGpc1 = numbers({1, 9, 17, 25, 32, 39, 46, 53});
const TpcMask kGpc6 = numbers({6, 14, 22, 30, 37, 44, 51, 58, 60});

}  // namespace

TEST(Rules, MaskOfOnlyHolesIsAnError) {
    const auto state = state_with({process(10, kGpc1)});
    const auto findings = check_change(state, change_of(state.processes[0], TpcMask::range(66, 70)));  // the H200 has TPCs 0-65
    const auto f = find_rule(findings, "TPC numbers and descriptor holes (measured on the H200)", Severity::error);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message, "process 10: mask 66-70 names no TPC this GPU has: its kernels would never run");
}

TEST(Rules, AnotherUsersProcessIsAnErrorUnlessAdmin) {
    auto state = state_with({process(10, kGpc1, true, 2000)});
    const auto change = change_of(state.processes[0], kGpc6);
    const auto f = find_rule(check_change(state, change), "registry permissions", Severity::error);
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->message.find("process 10 belongs to"), std::string::npos);
    state.caller_admin = true;
    EXPECT_EQ(find_rule(check_change(state, change), "registry permissions", Severity::error), std::nullopt);
}

TEST(Rules, NoChangeIsANoteOnTheChange) {
    const auto state = state_with({process(10, kGpc1)});
    const auto f = find_rule(check_change(state, change_of(state.processes[0], kGpc1)), "controller", Severity::info);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message, "process 10 already has TPCs 1,9,17,25,32,39,46,53: nothing to change");
}

TEST(Rules, PartialGpcsWarnSePacking) {
    const auto state = state_with({process(10, kGpc1)});
    const auto findings = check_plan(state, {change_of(state.processes[0], numbers({1, 9, 17, 25}) | kGpc6)});  // half of gpc1
    const auto f = find_rule(findings, "Bakita & Anderson, RTAS 2023 (SE-packed)", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message, "process 10 gets only 4 of gpc1's 8 TPCs: a partition of whole GPCs shares no GPC with others and interferes less");
    EXPECT_TRUE(f->is_new);
    EXPECT_EQ(std::count_if(findings.begin(), findings.end(), [](const Finding& x) { return x.severity == Severity::warning; }), 1);
}

// A plan warned about a split GPC that neither `gpupart check` nor the findings panel listed
// once applied, and later plans called old splits new.
TEST(Rules, TheStateAndAPlanAreJudgedByTheSameRulesAndAPlanMarksOnlyWhatItBrings) {
    // gpc1 of the H200 in TPC numbers is 1,9,17,25,32,39,46,53 (descriptor bits 9-16); 10 and 11 hold half each.
    const auto state = state_with({process(10, numbers({1, 9, 17, 25}) | kGpc6), process(11, numbers({32, 39, 46, 53}))});
    const auto partial = [](const std::vector<Finding>& findings, const std::string& who) {
        return std::find_if(findings.begin(), findings.end(), [&](const Finding& f) {
            return f.id == "partial-gpc" && f.message.rfind(who, 0) == 0;
        });
    };
    // The state as it is: both split gpc1.
    const auto now = check_result(state);
    ASSERT_NE(partial(now, "process 10 gets only 4 of gpc1's"), now.end());
    ASSERT_NE(partial(now, "process 11 gets only 4 of gpc1's"), now.end());
    for (const Finding& f : now) EXPECT_FALSE(f.is_new) << f.message;
    // A plan that shrinks 11 to 3 of gpc1: its split is new, 10's is as before.
    const std::vector<PlannedChange> shrink{change_of(state.processes[1], numbers({32, 39, 46}))};
    const auto plan = check_plan(state, shrink);
    const auto old_split = partial(plan, "process 10 gets only 4 of gpc1's");
    const auto new_split = partial(plan, "process 11 gets only 3 of gpc1's");
    ASSERT_NE(old_split, plan.end());
    ASSERT_NE(new_split, plan.end());
    EXPECT_FALSE(old_split->is_new);
    EXPECT_TRUE(new_split->is_new);
    // Applied, the steady state lists exactly what the plan warned about the result.
    const auto after = check_result(state_after(state, shrink));
    for (const auto* f : {&*old_split, &*new_split})
        EXPECT_TRUE(std::any_of(after.begin(), after.end(), [&](const Finding& a) { return a.id == f->id && a.message == f->message; }))
            << f->message;
}

GraphStatus graphs(std::uint64_t execs, std::uint64_t older, std::uint64_t unfollowable,
                   gpupart_graph_tracking tracking = GPUPART_GRAPHS_FOLLOWED) {
    GraphStatus g;
    g.tracking = tracking;
    g.execs = execs;
    g.older = older;
    g.current = execs - older;
    g.unfollowable = unfollowable;
    return g;
}

std::vector<std::string> ids_of(const std::vector<Finding>& findings) {
    std::vector<std::string> ids;
    for (const auto& f : findings) ids.push_back(f.id);
    return ids;
}

bool has_id(const std::vector<Finding>& findings, const std::string& id) {
    const auto ids = ids_of(findings);
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Rules, ChangedMaskSaysGraphExecsFollowAtTheirNextLaunch) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(3, 0, 0);
    const auto state = state_with({p});
    const auto findings = check_change(state, change_of(state.processes[0], kGpc6));
    const auto f = find_rule(findings, "docs/cuda-graphs.md", Severity::info);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-follow");
    EXPECT_EQ(f->message, "process 10: 3 CUDA graph execs take the new TPCs at their next launch");
    EXPECT_FALSE(has_id(findings, "graphs-keep-mask"));
}

TEST(Rules, WithTheShimsReMaskThreadGraphExecsAreReMaskedBeforeTheChangeReturns) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(1, 0, 0);
    p.graphs.ahead = true;
    const auto state = state_with({p});
    const auto f = find_rule(check_change(state, change_of(state.processes[0], kGpc6)), "docs/cuda-graphs.md", Severity::info);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-follow");
    EXPECT_EQ(f->message, "process 10: 1 CUDA graph exec is re-masked before this change returns (at the latest at its next launch)");
}

TEST(Rules, ChangedMaskWithoutGraphsSaysNothingAboutGraphs) {
    const auto state = state_with({process(10, kGpc1)});
    const auto findings = check_change(state, change_of(state.processes[0], kGpc6));
    EXPECT_FALSE(has_id(findings, "graphs-follow"));
    EXPECT_FALSE(has_id(findings, "graphs-keep-mask"));
}

TEST(Rules, ChangedMaskWarnsAboutGraphExecsThatCannotFollow) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(2, 0, 1);
    const auto state = state_with({p});
    const auto findings = check_change(state, change_of(state.processes[0], kGpc6));
    const auto f = find_rule(findings, "docs/cuda-graphs.md", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-keep-mask");
    EXPECT_EQ(f->message, "process 10: 1 of its 2 CUDA graph execs cannot be re-masked (conditional bodies, lost or "
                          "refused nodes): it keeps the old TPCs until re-instantiated");
    EXPECT_TRUE(has_id(findings, "graphs-follow"));  // the other one does
}

TEST(Rules, ChangedMaskWarnsWhenTheDriverRefusedGraphCallbacks) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(0, 0, 0, GPUPART_GRAPHS_UNAVAILABLE);
    const auto state = state_with({p});
    const auto f = find_rule(check_change(state, change_of(state.processes[0], kGpc6)), "graphs keep their upload mask (measured)", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-keep-mask");
    EXPECT_NE(f->message.find("CUDA graphs are not followed (the driver refused the graph-call callbacks)"), std::string::npos);
}

TEST(Rules, UnchangedMaskSaysNothingAboutGraphs) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(3, 0, 1);
    const auto state = state_with({p});
    const auto findings = check_change(state, change_of(state.processes[0], kGpc1));
    EXPECT_FALSE(has_id(findings, "graphs-follow"));
    EXPECT_FALSE(has_id(findings, "graphs-keep-mask"));
}

TEST(Rules, ResultNotesGraphExecsStillOnAnOlderMask) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(4, 1, 0);
    const auto findings = check_result(state_with({p}));
    const auto f = find_rule(findings, "docs/cuda-graphs.md", Severity::info);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-pending");
    EXPECT_EQ(f->message, "process 10: 4 CUDA graph execs: 3 carry the current mask, 1 an older one (re-masked at their next launch)");
}

TEST(Rules, ResultWarnsAboutUnfollowableGraphExecs) {
    auto p = process(10, kGpc1);
    p.graphs = graphs(2, 1, 1);
    const auto findings = check_result(state_with({p}));
    const auto f = find_rule(findings, "docs/cuda-graphs.md", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, "graphs-keep-mask");
    EXPECT_FALSE(has_id(findings, "graphs-pending"));
}

TEST(Rules, OverlapWarns) {
    // 11 holds the last two of gpc1 and the first four of gpc2 (descriptor bits 15-20).
    const auto state = state_with({process(10, kGpc1), process(11, numbers({46, 53, 2, 10, 18, 26}))});
    const auto f = find_rule(check_result(state), "Bakita & Anderson, ECRTS 2025, pitfall 8", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message, "process 10 and process 11 share TPCs 46,53: their kernels compete for those SMs");
}

TEST(Rules, UnpartitionedProcessBesideOthersWarns) {
    const auto state = state_with({process(10, kGpc1), process(11, {}, false)});
    const auto f = find_rule(check_result(state), "Bakita & Anderson, ECRTS 2025, section 5", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->message.find("process 11 has no partition"), std::string::npos);
}

TEST(Rules, IdleTpcsWarnWhenEveryoneIsPartitioned) {
    const auto findings = check_result(state_with({process(10, kGpc1), process(11, kGpc6)}));
    auto it = std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.message.find("given to no process") != std::string::npos; });
    ASSERT_NE(it, findings.end());
    EXPECT_EQ(it->message.substr(it->message.find('(')), "(49 of 66) are given to no process: they stay idle");
    // Nobody idle when the partitions cover every real TPC (holes do not count).
    const auto full = check_result(state_with({process(10, TpcMask::range(0, 40)), process(11, TpcMask::range(41, 127))}));
    EXPECT_TRUE(std::none_of(full.begin(), full.end(), [](const Finding& f) { return f.message.find("given to no process") != std::string::npos; }));
}

TEST(Rules, IdleTpcsBesideASingleProcessAreOnlyANote) {
    const auto findings = check_result(state_with({process(10, kGpc1)}));
    auto it = std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "idle-tpcs"; });
    ASSERT_NE(it, findings.end());
    EXPECT_EQ(it->severity, Severity::info);
}

TEST(Rules, NoMpsWithSeveralProcessesWarns) {
    const auto f = find_rule(check_result(state_with({process(10, kGpc1), process(11, kGpc6)}, false)), "Bakita & Anderson, RTAS 2024, rule R4", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->message.find("2 partitioned processes run without MPS"), std::string::npos);
    EXPECT_EQ(find_rule(check_result(state_with({process(10, kGpc1)}, false)), "Bakita & Anderson, RTAS 2024, rule R4", Severity::warning), std::nullopt);
}

TEST(Rules, TooManyMpsClientsWarns) {
    std::vector<ProcessState> many;
    for (int i = 0; i < 16; ++i) many.push_back(process(100 + i, TpcMask::range(i * 4 % 64, i * 4 % 64)));
    const auto f = find_rule(check_result(state_with(many)), "Bakita & Anderson, ECRTS 2025, pitfall 4", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->message.find("at most 15 clients"), std::string::npos);
    many.pop_back();
    EXPECT_EQ(find_rule(check_result(state_with(many)), "Bakita & Anderson, ECRTS 2025, pitfall 4", Severity::warning), std::nullopt);
}

TEST(Rules, MpsStaticPartitioningWarns) {
    auto state = state_with({process(10, kGpc1)});
    state.mps_static_partitioning = true;
    EXPECT_NE(find_rule(check_result(state), "MPS static SM partitioning (measured)", Severity::warning), std::nullopt);
}

TEST(Rules, SharedCopyEnginesWarnWhenSeveralProcessesPartition) {
    const auto findings = check_result(state_with({process(10, kGpc1), process(11, kGpc6)}));
    EXPECT_EQ(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.rule == "Bakita & Anderson, RTAS 2024, rule R8"; }), 2);
    const auto alone = check_result(state_with({process(10, kGpc1)}));
    EXPECT_TRUE(std::none_of(alone.begin(), alone.end(), [](const Finding& f) { return f.rule == "Bakita & Anderson, RTAS 2024, rule R8"; }));
}

TEST(Rules, StateAfterAppliesChanges) {
    const auto state = state_with({process(10, kGpc1), process(11, kGpc6)});
    const auto after = state_after(state, {change_of(state.processes[0], kGpc6)});
    EXPECT_EQ(after.processes[0].mask, kGpc6);
    const auto shares = [](const std::vector<Finding>& findings) {
        return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.message.find(" share TPCs ") != std::string::npos; });
    };
    EXPECT_TRUE(shares(check_result(after)));
    EXPECT_FALSE(shares(check_result(state)));
}

TEST(Rules, FindingLinesNameTheirRule) {
    // The id (its entry in docs/rules.md) and a reference a user can look up without this project's files.
    EXPECT_EQ(finding_line({Severity::warning, "Bakita & Anderson, RTAS 2024, rule R4", "x", "no-mps"}),
              "warning: x [no-mps; Bakita & Anderson, RTAS 2024, rule R4]");
    EXPECT_EQ(finding_line({Severity::info, "r", "y", "i"}), "note: y [i; r]");
    EXPECT_EQ(finding_line({Severity::info, "r", "y", ""}), "note: y [r]");
    EXPECT_TRUE(has_error({{Severity::info, "", "", ""}, {Severity::error, "", "", ""}}));
    EXPECT_FALSE(has_error({{Severity::warning, "", "", ""}}));
}

TEST(Rules, EveryFindingHasAStableId) {
    auto state = state_with({process(10, kGpc1), process(11, TpcMask::range(15, 20)), process(12, {}, false, 2000)}, false);
    state.mps_static_partitioning = true;
    auto findings = check_plan(state, {change_of(state.processes[2], TpcMask::range(4, 12))});
    ASSERT_GE(findings.size(), 8u);
    for (const Finding& f : findings) EXPECT_FALSE(f.id.empty()) << f.message;
}

// Findings cited documents users do not have. Every id has an entry in docs/rules.md (built in).
TEST(Rules, EveryFindingIdHasAnEntryInTheRulesDocument) {
    auto state = state_with({process(10, kGpc1), process(11, TpcMask::range(15, 20)), process(12, {}, false, 2000)}, false);
    state.mps_static_partitioning = true;
    auto findings = check_plan(state, {change_of(state.processes[2], TpcMask::range(4, 12))});
    const auto more = check_result(state_with({process(10, kGpc1)}));
    findings.insert(findings.end(), more.begin(), more.end());
    for (const char* id : {"overlap", "partial-gpc", "idle-tpcs", "unpartitioned", "no-mps", "too-many-mps-clients",
                           "mps-static-partitioning", "shared-copy-engines", "graphs-keep-mask", "graphs-follow", "graphs-pending",
                           "unreadable-slot", "mps-fatal-error", "mps-log-unreadable", "no-change", "no-real-tpc", "bad-mask",
                           "permission", "no-such-process", "process-replaced", "last-tpc", "last-tpcs", "no-free-tpc",
                           "undo-process-gone", "undo-changed-since", "undo-other-gpu", "undo-rules-changed-since", "grow-choice",
                           "journal-note", "too-many-rules", "rule-too-long", "unknown-user", "mask-bits-unknown", "interference",
                           "job-tpcs-taken", "job-reservations-unreadable"})
        findings.push_back({Severity::info, "", "", id});
    for (const Finding& f : findings) {
        const auto entry = rules_entry(f.id);
        ASSERT_TRUE(entry.has_value()) << f.id;
        EXPECT_FALSE(entry->empty()) << f.id;
    }
    // An entry runs to the next heading and holds the full reference.
    EXPECT_NE(rules_entry("no-mps")->find("RTAS 2024, rule R4"), std::string::npos);
    EXPECT_EQ(rules_entry("no-mps")->find("## "), std::string::npos);
    // One line per paragraph, no emphasis markers: a terminal wraps it to its width.
    EXPECT_EQ(rules_entry("no-mps")->find('\n'), std::string::npos);
    EXPECT_EQ(rules_entry("no-mps")->find("**"), std::string::npos);
    EXPECT_NE(rules_doc_text().find("Demystifying NVIDIA GPU Internals to Enable Reliable GPU"), std::string::npos);
    EXPECT_EQ(rules_entry("no-such-finding"), std::nullopt);
}

TEST(Rules, AProcessAboutToStartIsNamedSo) {
    const auto state = state_with({process(10, kGpc1), process(0, numbers({1, 9, 17, 25}))});  // half of gpc1
    const auto f = find_rule(check_result(state), "Bakita & Anderson, ECRTS 2025, pitfall 8", Severity::warning);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message, "process 10 and the new process share TPCs 1,9,17,25: their kernels compete for those SMs");
}

// The interference finding (InterferenceWatch, tests/unit/test_interference.cpp) is explained in
// docs/rules.md like every other finding.
TEST(Rules, TheInterferenceFindingHasAnEntry) { EXPECT_TRUE(rules_entry("interference").has_value()); }

// 40 processes on the same TPCs: 780 pairs. At most kFindingsPerId overlaps are said, then one finding
// with how many more; check_plan marks what is new against every finding, not the shown ones only.
TEST(Rules, PairwiseFindingsAreBoundedWithACountOfTheRest) {
    std::vector<ProcessState> many;
    for (int pid = 100; pid < 140; ++pid) many.push_back(process(pid, kGpc1));
    const SystemState state = state_with(many);
    const auto findings = check_result(state);
    const auto overlaps = std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "overlap"; });
    EXPECT_EQ(overlaps, static_cast<long>(kFindingsPerId) + 1);
    const auto more = std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
        return f.id == "overlap" && f.message.starts_with("and 760 more overlap findings");
    });
    ASSERT_NE(more, findings.end());
    EXPECT_EQ(more->severity, Severity::warning);
    const auto plan = check_plan(state, {change_of(many[0], kGpc6)});
    EXPECT_LE(std::count_if(plan.begin(), plan.end(), [](const Finding& f) { return f.id == "overlap"; }),
              static_cast<long>(kFindingsPerId) + 1);
    EXPECT_TRUE(std::none_of(plan.begin(), plan.end(), [](const Finding& f) { return f.id == "overlap" && f.is_new; }))
        << "the overlaps left are all there before the change";
}
