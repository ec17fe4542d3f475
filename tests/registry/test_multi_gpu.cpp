// Multi-GPU servers through the controller, real slot files and real processes: each GPU's
// state holds only its own processes, masks are checked against the GPU they are for, a change touches
// one GPU's entry, undo stays on the GPU of the change, profile rules are kept per GPU, and `gpupart top`
// switches GPUs with a key. The GPUs are tests/fixtures/multi-gpu/three-gpus.json (different
// floorsweeps); the shim side is tests/shim/multi_gpu_end_to_end.sh.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller/profile.hpp"
#include "controller/profile_apply.hpp"
#include "controller/rules_table.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/tpc_numbering.hpp"
#include "registry_test_support.hpp"
#include "snapshot/snapshot_file.hpp"
#include "top/top_session.hpp"

using namespace gpupart;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;

namespace {

const Snapshot& three_gpus() {
    static const Snapshot snapshot = load_snapshot(std::string(GPUPART_FIXTURES) + "/multi-gpu/three-gpus.json");
    return snapshot;
}
const Gpu& gpu(int index) { return three_gpus().gpus.at(static_cast<std::size_t>(index)); }
const std::string U0 = "GPU-e019853f-a4a4-3629-5365-9ff6caee6a2c";
const std::string U1 = "GPU-258f535b-999d-058c-3642-767b7fb8d4f0";

struct MultiGpuTest : ::testing::Test {
    TempRegistry registry_dir;
    std::string journal_path = registry_dir.dir + "/history.jsonl";
    Controller on(int index) const {
        return Controller(Registry(registry_dir.dir), gpu(index), Journal(journal_path));
    }
    std::vector<int> pids_on(int index) const {
        std::vector<int> pids;
        const Controller controller = on(index);  // kept: the loop reads its state
        for (const ProcessState& process : controller.state().processes) pids.push_back(process.pid);
        std::sort(pids.begin(), pids.end());
        return pids;
    }
    std::string mask_on(int pid, const std::string& uuid) const {
        const SlotRecord record = Registry(registry_dir.dir).find_live(pid);
        return record.control && test::has_mask_on(*record.control, uuid) ? test::allowed_on(*record.control, uuid).to_list()
                                                                            : "all";
    }
};

bool has_finding(const std::vector<Finding>& findings, const std::string& id) {
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
}

}  // namespace

TEST_F(MultiGpuTest, EachGpuSeesItsOwnProcessesAndNoOverlapAcrossGpus) {
    ASSERT_EQ(gpu_key(gpu(0)), U0);
    RegisteredChild a(registry_dir.dir, "0xf", U0.c_str());  // 0-3 on GPU 0
    RegisteredChild b(registry_dir.dir, "0xf", U1.c_str());  // the same bits on GPU 1: another board's TPCs
    RegisteredChild waiting(registry_dir.dir, nullptr);      // no mask, no context yet: may open any GPU
    EXPECT_EQ(pids_on(0), (std::vector<int>{std::min(a.pid, waiting.pid), std::max(a.pid, waiting.pid)}));
    EXPECT_EQ(pids_on(1), (std::vector<int>{std::min(b.pid, waiting.pid), std::max(b.pid, waiting.pid)}));
    EXPECT_EQ(on(0).state().elsewhere.size(), 1u);
    EXPECT_EQ(on(2).state().elsewhere.size(), 2u);
    for (int index : {0, 1}) {
        const Controller controller = on(index);
        const auto findings = check_result(controller.state());
        EXPECT_FALSE(has_finding(findings, "overlap")) << "GPU " << index;
    }
    // A count lands beside GPU 1's own process only: GPU 0's 0-3 are not in GPU 1's way.
    const Controller one = on(1);
    EXPECT_TRUE(one.free_for(0).test(0) == false);  // b holds bit 0 on GPU 1
    EXPECT_EQ(one.free_for(b.pid), real_tpcs(gpu(1)));
}

TEST_F(MultiGpuTest, AMaskIsCheckedAgainstTheGpuItIsFor) {
    RegisteredChild a(registry_dir.dir, "0x1fe00", U0.c_str());
    // Descriptor bits 0-3 are TPCs on GPU 0 and holes on GPU 2; TPCs 62-65 are GPU 0's, GPU 2 has 62 (0-61).
    EXPECT_FALSE(on(0).plan_set({{a.pid, "bits:0xf", Placement::packed}}, "set").refused());
    EXPECT_TRUE(on(2).plan_set({{a.pid, "bits:0xf", Placement::packed}}, "set").refused());
    EXPECT_FALSE(on(0).plan_set({{a.pid, "62-65", Placement::packed}}, "set").refused());
    EXPECT_TRUE(on(2).plan_set({{a.pid, "62-65", Placement::packed}}, "set").refused());
    // gpc0 names other TPCs on GPU 2's board than on GPU 0's.
    EXPECT_NE(resolve_mask("gpc0", gpu(0)).mask, resolve_mask("gpc0", gpu(2)).mask);
}

TEST_F(MultiGpuTest, AChangeTouchesOneGpuAndUndoStaysOnIt) {
    RegisteredChild a(registry_dir.dir, "0xf", U0.c_str());
    Controller one = on(1);
    // Descriptor bits 9-16 (gpc1) named as such: mask_on reads the slots' bits.
    const Applied applied = one.apply(one.plan_set({{a.pid, "bits:0x1fe00", Placement::packed}}, "set"));
    ASSERT_EQ(applied.entry.changes.size(), 1u);
    EXPECT_EQ(applied.entry.changes[0].gpu, U1);
    EXPECT_EQ(mask_on(a.pid, U1), "9-16");
    EXPECT_EQ(mask_on(a.pid, U0), "0-3");  // GPU 0's mask stays
    EXPECT_EQ(pids_on(1), std::vector<int>{a.pid});
    // Undo from GPU 0 refuses: the change was on GPU 1.
    const Plan wrong = on(0).plan_undo();
    EXPECT_TRUE(wrong.refused());
    EXPECT_TRUE(has_finding(wrong.findings, "undo-other-gpu"));
    Controller again = on(1);
    again.apply(again.plan_undo());
    EXPECT_EQ(mask_on(a.pid, U1), "all");
    EXPECT_EQ(mask_on(a.pid, U0), "0-3");
}

TEST_F(MultiGpuTest, ProfileRulesAreKeptPerGpu) {
    const Profile for_gpu0 = parse_profile(R"({"format": "gpupart-profile", "version": 2, "name": "zero", "description": "", "rules": [
        {"match": {"exe": "python3"}, "gpu": 0, "tpcs": "gpc1"}]})", "zero.json");
    const Profile for_gpu1 = parse_profile(R"({"format": "gpupart-profile", "version": 2, "name": "one", "description": "", "rules": [
        {"match": {"exe": "python3"}, "gpu": 1, "tpcs": "gpc2"}]})", "one.json");
    Controller zero = on(0);
    zero.apply(plan_profile(zero, for_gpu0, 0).plan);
    Controller one = on(1);
    one.apply(plan_profile(one, for_gpu1, 1).plan);
    const ArmedRules armed = read_armed_rules(registry_dir.dir);
    ASSERT_TRUE(armed.has_value());
    ASSERT_EQ(armed->count, 2u);  // GPU 0's rule stayed when GPU 1's was armed
    EXPECT_EQ(uuid_text(armed->rules[0].gpu), U0);
    // The shim copies a rule's mask into a new process's slot as it is: each GPU's TPCs as that GPU's descriptor bits.
    EXPECT_EQ(mask_from_words(armed->rules[0].allowed), TpcNumbering::of(gpu(0)).to_bits(resolve_mask("gpc1", gpu(0)).mask));
    EXPECT_EQ(uuid_text(armed->rules[1].gpu), U1);
    EXPECT_EQ(mask_from_words(armed->rules[1].allowed), TpcNumbering::of(gpu(1)).to_bits(resolve_mask("gpc2", gpu(1)).mask));
    EXPECT_NE(mask_from_words(armed->rules[1].allowed), resolve_mask("gpc2", gpu(1)).mask);  // never the numbers themselves
}

TEST_F(MultiGpuTest, TopShowsOneGpuAtATimeAndGSwitches) {
    RegisteredChild a(registry_dir.dir, "0xf", U0.c_str());
    RegisteredChild b(registry_dir.dir, "0x1fe00", U1.c_str());
    top::TopSource source{"three-gpus.json", false, "test", "", 3};
    top::TopSession session(on(0), Registry(registry_dir.dir), source, top::Settings{}, three_gpus().gpus);
    const auto shown = [&] {
        std::vector<int> pids;
        for (const auto& process : session.data().processes) pids.push_back(process.pid);
        return pids;
    };
    session.frame(120, 40);
    EXPECT_EQ(session.data().gpu.index, 0);
    EXPECT_EQ(shown(), std::vector<int>{a.pid});
    EXPECT_NE(session.frame(120, 40).text().find("GPU 0 of 3"), std::string::npos);
    session.handle(top::char_key('G'));
    EXPECT_EQ(session.data().gpu.index, 1);
    EXPECT_EQ(shown(), std::vector<int>{b.pid});
    EXPECT_NE(session.frame(120, 40).text().find("GPU 1 of 3"), std::string::npos);
    session.handle(top::char_key('G'));
    EXPECT_EQ(session.data().gpu.index, 2);
    EXPECT_TRUE(shown().empty());
    session.handle(top::char_key('G'));
    EXPECT_EQ(session.data().gpu.index, 0);
}
