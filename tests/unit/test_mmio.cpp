// The MMIO reader: register images, decoding of the published layouts on the synthesized H100 image,
// and the paths where BAR0 cannot be had.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/user_error.hpp"
#include "sources/mmio_reader.hpp"

namespace fs = std::filesystem;
using gpupart::SourceState;

namespace {

const std::string kImage = std::string(GPUPART_FIXTURES) + "/mmio-h100/h100-bar0.regs";

std::string parse_error(const std::string& text) {
    try {
        gpupart::RegisterImage::parse(text, "test.regs");
    } catch (const gpupart::UserError& error) {
        return error.what();
    }
    return "(accepted)";
}

}  // namespace

TEST(Mmio, DecodesTheH100ImageFloorplan) {
    const gpupart::MmioFacts facts = gpupart::read_mmio_image(kImage);
    ASSERT_EQ(facts.status.state, SourceState::ok) << facts.status.detail;
    EXPECT_EQ(facts.status.detail, "register image " + kImage + ": Hopper (architecture 0x18)");
    EXPECT_EQ(facts.architecture.value, 0x18);
    EXPECT_EQ(facts.gpc_slots.value, 8);
    EXPECT_EQ(facts.tpc_slots_per_gpc.value, 9);
    EXPECT_EQ(facts.enabled_gpcs.value, 0xffu);
    const std::vector<std::uint32_t> expected = {0x1ff, 0x1fd, 0x1bf, 0x1bf, 0x1bf, 0x1ff, 0x1bf, 0x1bf};
    ASSERT_EQ(facts.enabled_tpcs.size(), 8u);
    int tpcs = 0;
    for (int gpc = 0; gpc < 8; ++gpc) {
        EXPECT_EQ(facts.enabled_tpcs.at(gpc).value, expected[gpc]) << gpc;
        tpcs += std::popcount(*facts.enabled_tpcs.at(gpc).value);
    }
    EXPECT_EQ(tpcs, 66);
    EXPECT_EQ(facts.enabled_tpcs.at(1).from.source, gpupart::Source::mmio);
    EXPECT_EQ(facts.enabled_tpcs.at(1).from.detail, "register image " + kImage + ": NV_FUSE_STATUS_OPT_TPC_GPC(1) (0x00820c3c)");
}

TEST(Mmio, DecodesEnginesRunlistsAndChannels) {
    const gpupart::MmioFacts facts = gpupart::read_mmio_image(kImage);
    ASSERT_TRUE(facts.engines.known()) << facts.engines.unknown_reason;
    const auto& engines = *facts.engines.value;
    ASSERT_EQ(engines.size(), 6u);
    EXPECT_EQ(engines[0].type_name, "GRAPHICS");
    EXPECT_EQ(engines[3].type_name, "LCE");
    EXPECT_EQ(engines[3].instance, 2);
    EXPECT_EQ(engines[2].runlist_engine_id, 2);
    ASSERT_EQ(facts.runlists.size(), 4u);
    const std::vector<int> ids = {0, 1, 3, 10};
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(facts.runlists[i].id.value, ids[i]) << i;
    EXPECT_EQ(facts.runlists[0].engine_indexes, (std::vector<int>{0, 1, 2}));  // GR0, COPY0, COPY1 share runlist 0
    EXPECT_EQ(facts.runlists[0].channel_slots.value, 2048);
    EXPECT_EQ(facts.runlists[0].allocated_channels.value, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(facts.runlists[3].allocated_channels.value, std::vector<int>{});
}

TEST(Mmio, DecodesTheCopyEngineWiringWithGrceSharing) {
    const gpupart::MmioFacts facts = gpupart::read_mmio_image(kImage);
    EXPECT_EQ(facts.pce_map.value, 0xffffu);
    ASSERT_TRUE(facts.copy_engines.known()) << facts.copy_engines.unknown_reason;
    const auto& ces = *facts.copy_engines.value;
    ASSERT_EQ(ces.size(), 5u);
    // The RM controls' answer on the H100: LCE0..4 PCE masks 0x5000, 0xa000, 0x5000, 0xa000, 0x0fff.
    const std::vector<std::uint32_t> masks = {0x5000, 0xa000, 0x5000, 0xa000, 0x0fff};
    for (int lce = 0; lce < 5; ++lce) {
        EXPECT_EQ(ces[lce].lce, lce);
        EXPECT_EQ(ces[lce].pce_mask, masks[lce]) << lce;
    }
    EXPECT_EQ(ces[0].shares_lce, 2);
    EXPECT_EQ(ces[1].shares_lce, 3);
    EXPECT_FALSE(ces[2].shares_lce.has_value());
}

TEST(Mmio, MissingRegistersMakeTheirFactsUnknownAndSaySo) {
    std::ifstream in(kImage);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("0x00820c3c 0x2");
    text.erase(at, text.find('\n', at) - at + 1);
    const gpupart::MmioFacts facts = gpupart::decode_mmio(gpupart::RegisterImage::parse(text, "cut.regs"));
    EXPECT_EQ(facts.status.state, SourceState::failed);
    EXPECT_EQ(facts.status.detail, "register image cut.regs has no NV_FUSE_STATUS_OPT_TPC_GPC(1) (0x00820c3c) (1 register(s) missing)");
    EXPECT_FALSE(facts.enabled_tpcs.at(1).known());
    EXPECT_EQ(facts.enabled_tpcs.at(1).unknown_reason, "register image cut.regs has no NV_FUSE_STATUS_OPT_TPC_GPC(1) (0x00820c3c)");
    EXPECT_EQ(facts.enabled_tpcs.at(2).value, 0x1bfu);
    EXPECT_TRUE(facts.copy_engines.known());
}

TEST(Mmio, RefusesArchitecturesWhoseLayoutsItDoesNotUse) {
    gpupart::MmioFacts facts = gpupart::decode_mmio(gpupart::RegisterImage::parse("0x0 0x16000001\n", "turing.regs"));
    EXPECT_EQ(facts.status.state, SourceState::unsupported);
    EXPECT_EQ(facts.status.detail,
              "register image turing.regs: architecture 0x16 (Turing) is not one whose register layouts gpupart uses "
              "(Ampere, Hopper, Ada)");
    facts = gpupart::decode_mmio(gpupart::RegisterImage::parse("0x0 0xffffffff\n", "lost.regs"));
    EXPECT_EQ(facts.status.state, SourceState::failed);
    EXPECT_EQ(facts.status.detail, "register image lost.regs: NV_PMC_BOOT_0 reads 0xffffffff: the GPU is not answering");
    facts = gpupart::decode_mmio(gpupart::RegisterImage::parse("# nothing\n", "empty.regs"));
    EXPECT_EQ(facts.status.detail, "register image empty.regs has no NV_PMC_BOOT_0 (0x00000000)");
}

TEST(Mmio, RegisterImageFormat) {
    const gpupart::RegisterImage image = gpupart::RegisterImage::parse("0x10 0x1\n\n  # note\n0x20-0x2c 0xab # run\n", "ok.regs");
    EXPECT_EQ(image.read32(0x10), 1u);
    EXPECT_EQ(image.read32(0x28), 0xabu);
    EXPECT_EQ(image.read32(0x2c), 0xabu);
    EXPECT_FALSE(image.read32(0x30).has_value());
    EXPECT_FALSE(image.read32(0x14).has_value());
    EXPECT_EQ(parse_error("0x10 1\n"), "test.regs line 1: expected '0xOFFSET 0xVALUE' or '0xFIRST-0xLAST 0xVALUE', got '0x10 1'");
    EXPECT_EQ(parse_error("0x11 0x1\n"), "test.regs line 1: offsets must be 4-byte aligned and ascending");
    EXPECT_EQ(parse_error("0x20 0x1\n0x10-0x40 0x0\n"), "test.regs line 2: offset 0x10 is given twice");
    EXPECT_EQ(parse_error("0x10-0x40 0x0\n0x20 0x1\n"), "test.regs line 2: offset 0x20 is given twice");
    EXPECT_THROW(gpupart::read_mmio_image("/nonexistent.regs"), gpupart::UserError);
}

TEST(Mmio, Bar0OfADeviceThatIsNotThereIsAbsent) {
    const gpupart::MmioFacts facts = gpupart::read_mmio("00000000:FF:1F.7");
    EXPECT_EQ(facts.status.state, SourceState::absent);
    EXPECT_EQ(facts.status.detail, "/sys/bus/pci/devices/0000:ff:1f.7/resource0: No such file or directory");
    EXPECT_EQ(gpupart::sysfs_bus_id("00000000:04:00.0"), "0000:04:00.0");
    EXPECT_EQ(gpupart::sysfs_bus_id("0001:04:00.0"), "0001:04:00.0");
}

TEST(Mmio, Bar0ThatIsNotAGpuSaysWhatItReads) {
    // A constructed sysfs: resource0 is a plain file here, so mmap works and the "GPU" reads zeros,
    // which is architecture 0: refused, in one line, as any GPU whose layouts are not the published ones.
    const fs::path root = fs::temp_directory_path() / ("gpupart-sysfs-mmio-" + std::to_string(::getpid()));
    fs::create_directories(root / "bus/pci/devices/0000:04:00.0");
    {
        std::ofstream bar(root / "bus/pci/devices/0000:04:00.0/resource0", std::ios::binary);
        const std::string zeros(4096, '\0');
        bar << zeros;
    }
    const gpupart::MmioFacts facts = gpupart::read_mmio("0000:04:00.0", root.string());
    EXPECT_EQ(facts.status.state, SourceState::unsupported);
    EXPECT_EQ(facts.status.detail,
              "BAR0 of 0000:04:00.0: architecture 0x0 (another architecture) is not one whose register layouts gpupart uses "
              "(Ampere, Hopper, Ada)");
    fs::remove_all(root);
}
