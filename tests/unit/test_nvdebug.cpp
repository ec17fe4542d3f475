// The nvdebug reader on text built from nvdebug's own print formats (tests/fixtures/nvdebug-h100,
// filled with the H100's recorded facts), its parsers on the shapes nvdebug prints, and its absent path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/user_error.hpp"
#include "probe_fixtures.hpp"
#include "sources/nvdebug_reader.hpp"
#include "sources/probe_analysis.hpp"
#include "../lib/thrown_message.hpp"

namespace fs = std::filesystem;
using gpupart::SourceState;

namespace {

const std::string kRoot = std::string(GPUPART_FIXTURES) + "/nvdebug-h100";

std::string error_of(void (*parse)(std::string_view), std::string_view text) {
    return gpupart::test::thrown_message([&] { parse(text); }, "(accepted)");
}

}  // namespace

TEST(Nvdebug, ReadsTheH100FloorplanFromTheFuseFiles) {
    const gpupart::NvdebugFacts facts = gpupart::read_nvdebug(kRoot, 0);
    ASSERT_EQ(facts.status.state, SourceState::ok) << facts.status.detail;
    EXPECT_EQ(facts.status.source, gpupart::Source::nvdebug);
    EXPECT_EQ(facts.gpc_slots.value, 8);
    EXPECT_EQ(facts.tpc_slots_per_gpc.value, 9);
    EXPECT_EQ(facts.enabled_gpcs.value, 0xffu);
    const std::vector<std::uint32_t> expected = {0x1ff, 0x1fd, 0x1bf, 0x1bf, 0x1bf, 0x1ff, 0x1bf, 0x1bf};
    ASSERT_EQ(facts.enabled_tpcs.size(), 8u);
    for (int gpc = 0; gpc < 8; ++gpc) EXPECT_EQ(facts.enabled_tpcs.at(gpc).value, expected[gpc]) << gpc;
    EXPECT_EQ(facts.enabled_tpcs.at(1).from.detail, kRoot + "/gpu0/gpc1_tpc_mask");
    EXPECT_FALSE(facts.copy_engine_count.known());
    EXPECT_EQ(facts.copy_engine_count.unknown_reason, "no file " + kRoot + "/gpu0/num_ces");
}

TEST(Nvdebug, CwdRegistersGiveTheSmOrderTheProbeJoinsWith) {
    const gpupart::NvdebugFacts facts = gpupart::read_nvdebug(kRoot, 0);
    ASSERT_EQ(facts.cwd_tpcs.size(), 66u) << facts.cwd_unknown;
    EXPECT_EQ(facts.cwd_tpcs[0].gpc, 1);
    EXPECT_EQ(facts.cwd_tpcs[0].local_tpc, 0);
    EXPECT_EQ(facts.cwd_tpcs[65].first_sm, 130);
    const std::vector<gpupart::SmOrderEntry> from_cwd = gpupart::nvdebug_sm_order(facts, 2);
    const std::vector<gpupart::SmOrderEntry> from_rm = gpupart::test::h100_recorded_sm_order();
    ASSERT_EQ(from_cwd.size(), from_rm.size());
    for (std::size_t i = 0; i < from_rm.size(); ++i) {
        EXPECT_EQ(from_cwd[i].sm, from_rm[i].sm);
        EXPECT_EQ(from_cwd[i].logical_gpc, from_rm[i].logical_gpc) << "SM " << i;
        EXPECT_EQ(from_cwd[i].local_tpc, from_rm[i].local_tpc) << "SM " << i;
        EXPECT_EQ(from_cwd[i].global_tpc, from_rm[i].global_tpc) << "SM " << i;
    }
    const gpupart::ProbeJoin join =
        gpupart::join_with_sm_order(gpupart::analyse_probe(gpupart::test::h200_recorded_report()), from_cwd);
    EXPECT_TRUE(join.agrees()) << join.conflicts.front();
}

TEST(Nvdebug, EnginesCopyWiringAndRunlists) {
    const gpupart::NvdebugFacts facts = gpupart::read_nvdebug(kRoot, 0);
    ASSERT_TRUE(facts.engines.known()) << facts.engines.unknown_reason;
    const auto& engines = *facts.engines.value;
    ASSERT_EQ(engines.size(), 6u);
    EXPECT_EQ(engines[0].engine_type, 0);
    EXPECT_EQ(engines[0].type_name, "Graphics/Compute");
    EXPECT_EQ(engines[0].runlist_pri_base, 0xc00000u);
    EXPECT_EQ(engines[5].engine_type, 19);
    EXPECT_EQ(engines[5].instance, 4);
    EXPECT_EQ(engines[5].runlist_pri_base, 0xc00c00u);
    EXPECT_EQ(engines[2].runlist_engine_id, 2);
    EXPECT_EQ(engines[2].is_engine, true);
    ASSERT_TRUE(facts.copy_links.known());
    const auto& links = *facts.copy_links.value;
    ASSERT_EQ(links.size(), 5u);
    EXPECT_EQ(links[0].from, "GRCE0");
    EXPECT_EQ(links[0].to, gpupart::NvdebugCopyLink::To::lce);
    EXPECT_EQ(links[0].to_index, 2);
    EXPECT_EQ(links[4].from_lce, 4);
    EXPECT_EQ(links[4].to, gpupart::NvdebugCopyLink::To::pce);
    EXPECT_EQ(links[4].to_index, 11);
    EXPECT_EQ(facts.pce_map.value, 0xffffu);
    ASSERT_EQ(facts.runlists.size(), 4u);
    ASSERT_TRUE(facts.runlists[0].runlist.known());
    const gpupart::NvdebugRunlist& rl0 = *facts.runlists[0].runlist.value;
    ASSERT_EQ(rl0.tsgs.size(), 1u);
    EXPECT_EQ(rl0.tsgs[0].id, 1);
    EXPECT_EQ(rl0.tsgs[0].length, 3);
    ASSERT_EQ(rl0.tsgs[0].channels.size(), 3u);
    EXPECT_EQ(rl0.tsgs[0].channels[2].id, 3);
    EXPECT_EQ(rl0.tsgs[0].channels[0].instance_ptr, 0x7fe01000u);
    EXPECT_EQ(rl0.tsgs[0].channels[0].instance_target, "VID_MEM");
    EXPECT_EQ(rl0.tsgs[0].channels[0].details.at("Enabled"), "1");
    EXPECT_EQ(rl0.tsgs[0].channels[0].details.at("Acquire Fail"), "0");
    EXPECT_TRUE(facts.runlists[3].runlist.value->tsgs.empty());
}

TEST(Nvdebug, AbsentWhereTheModuleIsNotLoaded) {
    const gpupart::NvdebugFacts here = gpupart::read_nvdebug("/proc", 0);
    if (fs::exists("/proc/gpu0")) GTEST_SKIP() << "nvdebug is loaded on this machine";
    EXPECT_EQ(here.status.state, SourceState::absent);
    EXPECT_EQ(here.status.detail, "no /proc/gpu0: the nvdebug module is not loaded");
    EXPECT_EQ(gpupart::read_nvdebug(kRoot, 1).status.detail, "no " + kRoot + "/gpu1: the nvdebug module is not loaded");
}

TEST(Nvdebug, AFileNvdebugNeverPrintsFailsTheSourceButKeepsTheRest) {
    const fs::path root = fs::temp_directory_path() / ("gpupart-nvdebug-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::copy(kRoot, root, fs::copy_options::recursive);
    std::ofstream(root / "gpu0/gpc_mask") << "sixteen\n";
    fs::remove(root / "gpu0/CWD_GPC_TPC_ID3");
    const gpupart::NvdebugFacts facts = gpupart::read_nvdebug(root.string(), 0);
    EXPECT_EQ(facts.status.state, SourceState::failed);
    EXPECT_EQ(facts.status.detail, (root / "gpu0/gpc_mask").string() + ": 'sixteen\n' is not a register value nvdebug prints (1 problem(s))");
    EXPECT_FALSE(facts.enabled_gpcs.known());
    EXPECT_EQ(facts.enabled_tpcs.at(1).value, 0x1fdu);
    EXPECT_TRUE(facts.cwd_tpcs.empty());
    EXPECT_EQ(facts.cwd_unknown, "no file " + (root / "gpu0/CWD_GPC_TPC_ID3").string());
    fs::remove_all(root);
}

TEST(NvdebugParse, RegisterValuesAsTheKernelAndGlibcPrintThem) {
    EXPECT_EQ(gpupart::parse_nvdebug_register("0x1ff\n"), 0x1ffu);
    EXPECT_EQ(gpupart::parse_nvdebug_register("0x0\n"), 0u);
    EXPECT_EQ(gpupart::parse_nvdebug_register("0\n"), 0u);
    EXPECT_EQ(gpupart::parse_nvdebug_register("0xbadf1201"), 0xbadf1201u);
    EXPECT_THROW(gpupart::parse_nvdebug_register("0x123456789\n"), gpupart::UserError);
    EXPECT_THROW(gpupart::parse_nvdebug_register("511\n"), gpupart::UserError);
}

TEST(NvdebugParse, PreAmpereDeviceInfo) {
    const std::string text =
        "| BAR0 Base 0x00400000\n"
        "|           instance 0\n"
        "| Fault ID:          0\n"
        "| Host's Engine ID:  0\n"
        "| Runlist ID:        0\n"
        "| Interrupt ID:     12\n"
        "| Reset ID:         12\n"
        "| Engine Type:       0 (Graphics/Compute)\n"
        "+---------------------+\n";
    const auto engines = gpupart::parse_nvdebug_device_info(text);
    ASSERT_EQ(engines.size(), 1u);
    EXPECT_EQ(engines[0].pri_base, 0x400000u);
    EXPECT_EQ(engines[0].runlist_id, 0);
    EXPECT_EQ(engines[0].interrupt_id, 12);
    EXPECT_FALSE(engines[0].runlist_pri_base.has_value());
    EXPECT_EQ(error_of([](std::string_view t) { gpupart::parse_nvdebug_device_info(t); }, "| Engine Type:  0 (GR)\n"),
              "device_info ends inside an entry: the table was cut off");
    EXPECT_EQ(error_of([](std::string_view t) { gpupart::parse_nvdebug_device_info(t); }, "| Colour: blue\n+---------------------+\n"),
              "device_info line 1: not a line nvdebug prints ('| Colour: blue')");
}

TEST(NvdebugParse, RunlistWithInstanceBlockBareChannelAndMissingChannel) {
    const std::string text =
        "+---- TSG Entry 12 ---+\n"
        "| Scale: 3            |\n"
        "| Timeout: 128        |\n"
        "| Length: 2           |\n"
        "+---------------------+\n"
        "  +- Channel Entry 511 -+\n"
        "  | Runqueue Selector: 1|\n"
        "  | Instance PTR:       |\n"
        "  |   0x0000000012345000|\n"
        "  |     SYS_MEM_COHERENT|\n"
        "  |= Instance Block ====|\n"
        "  | Target Engine:     0|\n"
        "  | WFI PTR:            |\n"
        "  |   0x0000000000abc000|\n"
        "  |              VID_MEM|\n"
        "  | Virtual address?   1|\n"
        "  | CPU SC00 ASID      7|\n"
        "  |= Context State =====|\n"
        "  | Cmp. Preemption: CTA|\n"
        "  | #WFI Saves:        4|\n"
        "  +---------------------+\n"
        "[missing channel]\n"
        "+- Channel Entry 7   -+\n"
        "| Instance PTR:       |\n"
        "|   0x0000000000001000|\n"
        "|              VID_MEM|\n"
        "+---------------------+\n";
    const gpupart::NvdebugRunlist runlist = gpupart::parse_nvdebug_runlist(text);
    ASSERT_EQ(runlist.tsgs.size(), 1u);
    const gpupart::NvdebugTsg& tsg = runlist.tsgs[0];
    EXPECT_EQ(tsg.id, 12);
    EXPECT_EQ(tsg.missing_channels, 1);
    ASSERT_EQ(tsg.channels.size(), 1u);
    const gpupart::NvdebugChannel& channel = tsg.channels[0];
    EXPECT_EQ(channel.id, 511);
    EXPECT_EQ(channel.runqueue_selector, 1);
    EXPECT_EQ(channel.instance_ptr, 0x12345000u);
    EXPECT_EQ(channel.instance_target, "SYS_MEM_COHERENT");
    EXPECT_EQ(channel.details.at("WFI PTR"), "0x0000000000abc000 VID_MEM");
    EXPECT_EQ(channel.details.at("Virtual address?"), "1");
    EXPECT_EQ(channel.details.at("CPU SC00 ASID"), "7");
    EXPECT_EQ(channel.details.at("Cmp. Preemption"), "CTA");
    EXPECT_EQ(channel.details.at("#WFI Saves"), "4");
    ASSERT_EQ(runlist.bare_channels.size(), 1u);
    EXPECT_EQ(runlist.bare_channels[0].id, 7);
    EXPECT_EQ(error_of([](std::string_view t) { gpupart::parse_nvdebug_runlist(t); }, "+---- TSG Entry 1  ---+\n| Scale: 3 |\n"),
              "runlist ends inside an entry: expected a Scale, Timeout or Length line");
    EXPECT_EQ(error_of([](std::string_view t) { gpupart::parse_nvdebug_runlist(t); }, "TSG 4\n"),
              "runlist line 1: not a line nvdebug prints ('TSG 4')");
}
