// The built-in H200 snapshot agrees with the raw recordings in tests/fixtures/live-h200 and h200.
// The logs are read here with this test's own small parsing, independent of the generator's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

std::string fixture(const std::string& name) {
    std::string path = GPUPART_FIXTURES;
    path.append("/").append(name);
    std::ifstream in(path);
    EXPECT_TRUE(in) << name;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

// bit -> SM ids from the maskbits log's "bit->sm" line ("-" = no SM).
std::map<int, std::vector<int>> logged_bit_map() {
    const std::string log = fixture("h200/2026-11-22-maskbits.log");
    const auto start = log.find("bit->sm (anchored on bit 0):\n");
    const std::string line = log.substr(start, log.find('\n', log.find('\n', start) + 1) - start);
    std::map<int, std::vector<int>> map;
    const std::regex entry(R"((\d+):(-|[\d,]+))");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), entry); it != std::sregex_iterator(); ++it) {
        std::vector<int> sms;
        std::stringstream list((*it)[2].str());
        for (std::string sm; std::getline(list, sm, ',');)
            if (sm != "-") sms.push_back(std::stoi(sm));
        map[std::stoi((*it)[1])] = sms;
    }
    return map;
}

std::set<int> sms_in_gpc(int gpc) {
    const auto sms = sms_of(h200(), gpc_tpcs(h200(), gpc));
    return {sms.begin(), sms.end()};
}

}  // namespace

TEST(BuiltinH200, CountsMatchHardwareDoc) {
    EXPECT_EQ(h200().tpcs.size(), 66u);
    EXPECT_EQ(sm_total(h200()), 132);
    EXPECT_EQ(h200().holes.size(), 62u);
    EXPECT_EQ(h200().gpcs.size(), 8u);
    EXPECT_EQ(*h200().sm_count.value, 132);
    EXPECT_EQ(*h200().descriptor_version.value, 0x40);
    EXPECT_EQ(h200().mask_width, 128);
}

TEST(BuiltinH200, EveryLoggedBitHasTheLoggedSms) {
    const auto logged = logged_bit_map();
    ASSERT_EQ(logged.size(), 127u);  // bits 1..127; bit 0 is the anchor
    for (const auto& [bit, sms] : logged) {
        const Tpc* tpc = find_tpc_by_bit(h200(), bit);
        if (sms.empty()) {
            EXPECT_EQ(tpc, nullptr) << "bit " << bit << " is a hole in the log";
            EXPECT_TRUE(hole_bits(h200()).test(bit)) << bit;
        } else {
            ASSERT_NE(tpc, nullptr) << "bit " << bit << " drives SMs in the log";
            EXPECT_EQ(tpc->sms, sms) << "bit " << bit;
        }
    }
}

TEST(BuiltinH200, AnchorBitZeroDrivesSmsZeroAndOne) {
    // "masked (TPC0-3 only) distinct SMs: 8 : 0 1 16 17 32 33 48 49", less bits 1-3 (16,17 32,33 48,49).
    ASSERT_NE(find_tpc(h200(), 0), nullptr);
    EXPECT_EQ(find_tpc(h200(), 0)->sms, (std::vector<int>{0, 1}));
    EXPECT_NE(fixture("h200/2026-11-22-maskbits.log").find("masked (TPC0-3 only) distinct SMs: 8 : 0 1 16 17 32 33 48 49"),
              std::string::npos);
}

TEST(BuiltinH200, EveryLoggedClusterGroupLiesInOneGpc) {
    // A thread-block cluster never spans GPCs: each group of SMs that shared 8-block clusters on
    // 2026-11-22 must lie inside one GPC of the driver's floorplan, a different GPC for each group.
    const std::string corun = fixture("h200/2026-11-22-corun.log");
    const std::string block = corun.substr(corun.find("cluster8:"), corun.find("---") - corun.find("cluster8:"));
    std::vector<std::set<int>> groups;
    const std::regex group(R"(\[([ \d]+)\])");
    for (auto it = std::sregex_iterator(block.begin(), block.end(), group); it != std::sregex_iterator(); ++it) {
        std::stringstream list((*it)[1].str());
        std::set<int> sms;
        for (int sm; list >> sm;) sms.insert(sm);
        if (sms.size() > 1) groups.push_back(sms);
    }
    ASSERT_EQ(groups.size(), 8u);
    std::set<int> gpcs_used;
    for (const auto& sms : groups) {
        int holder = -1;
        for (int gpc = 0; gpc < 8; ++gpc) {
            const auto in_gpc = sms_in_gpc(gpc);
            if (std::includes(in_gpc.begin(), in_gpc.end(), sms.begin(), sms.end())) holder = gpc;
        }
        ASSERT_GE(holder, 0) << "the group starting at SM " << *sms.begin() << " spans GPCs";
        EXPECT_TRUE(gpcs_used.insert(holder).second) << "two groups in gpc" << holder;
    }
    // The measured group sizes: one of 8 SMs (the GPC whose other 4 TPCs never shared a cluster), five of 16, two of 18.
    std::multiset<std::size_t> sizes;
    for (const auto& g : groups) sizes.insert(g.size());
    EXPECT_EQ(sizes, (std::multiset<std::size_t>{8, 16, 16, 16, 16, 16, 18, 18}));
}

TEST(BuiltinH200, GpcsAreTheDriversPhysicalGpcsInMaskBitOrder) {
    // GPCs are numbered by their lowest launch-descriptor bit; their TPC numbers are striped (TPC k = SMs 2k, 2k+1).
    const auto bits_of = [](const TpcMask& numbers) { return TpcNumbering::of(h200()).to_bits(numbers).to_list(); };
    EXPECT_EQ(gpc_tpcs(h200(), 0).to_list(), "0,8,16,24,62-65");
    EXPECT_EQ(gpc_tpcs(h200(), 1).to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 0)), "0-3,75,78,81,83");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 1)), "9-16");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 2)), "18-25");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 3)), "27-34");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 4)), "36-43");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 5)), "45-52");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 6)), "54-62");
    EXPECT_EQ(bits_of(gpc_tpcs(h200(), 7)), "63-71");
    EXPECT_EQ(undetermined_gpc_tpcs(h200()).to_list(), "");
    // Each TPC sits in the physical GPC and slot the driver gave in the live capture.
    const Snapshot live = load_snapshot(std::string(GPUPART_FIXTURES) + "/live-h200/live-h200.json");
    const Gpu& driver = live.gpus.at(0);
    std::vector<int> physical;
    for (const Gpc& gpc : h200().gpcs) {
        EXPECT_EQ(gpc.tpc_slots, 9);
        ASSERT_TRUE(gpc.physical_id.has_value());
        physical.push_back(*gpc.physical_id);
    }
    EXPECT_EQ(physical, (std::vector<int>{1, 2, 3, 4, 6, 7, 0, 5}));
    for (const Tpc& tpc : driver.tpcs) {
        const Tpc* mine = find_tpc_by_bit(h200(), *tpc.mask_bit);
        ASSERT_NE(mine, nullptr) << *tpc.mask_bit;
        EXPECT_EQ(physical.at(static_cast<std::size_t>(*mine->gpc)), *tpc.gpc) << "bit " << *tpc.mask_bit;
        EXPECT_EQ(mine->slot, tpc.slot) << "bit " << *tpc.mask_bit;
        EXPECT_EQ(mine->sms, tpc.sms) << "bit " << *tpc.mask_bit;
    }
}

TEST(BuiltinH200, FourTpcsHaveTheirGpcFromTheFloorplanOnly) {
    for (int bit : {75, 78, 81, 83}) {
        const Tpc* tpc = find_tpc_by_bit(h200(), bit);
        ASSERT_NE(tpc, nullptr);
        EXPECT_EQ(tpc->gpc, 0);
        EXPECT_NE(tpc->gpc_note.find("floorplan only"), std::string::npos) << tpc->gpc_note;
    }
    EXPECT_NE(find_tpc_by_bit(h200(), 9)->gpc_note.find("thread-block clusters"), std::string::npos);
    EXPECT_EQ(find_tpc_by_bit(h200(), 83)->sms, (std::vector<int>{130, 131}));
}

TEST(BuiltinH200, HolesHaveNoGuessedGpc) {
    EXPECT_EQ(hole_bits(h200()).to_list(), "4-8,17,26,35,44,53,72-74,76-77,79-80,82,84-127");
    for (const Hole& hole : h200().holes) EXPECT_FALSE(hole.gpc.has_value()) << hole.mask_bit;
}

TEST(BuiltinH200, EveryFactSaysWhereItCameFrom) {
    for (const Tpc& tpc : h200().tpcs) {
        EXPECT_EQ(tpc.from.source, Source::recorded);
        EXPECT_NE(tpc.from.detail.find("live-h200.json (rmctrl: GR_GET_TPC_MASK"), std::string::npos) << tpc.from.detail;
        EXPECT_NE(tpc.from.detail.find("2026-11-22-maskbits.log"), std::string::npos);
        EXPECT_EQ(tpc.from.detail.find("/tmp/"), std::string::npos) << "no path of the capture's temporary directory";
    }
    for (const Engine& engine : h200().engines) EXPECT_NE(engine.from.detail.find("live-h200"), std::string::npos) << engine.name;
    EXPECT_FALSE(h200().uuid.known());
    EXPECT_NE(h200().uuid.unknown_reason.find("names one board"), std::string::npos);
    EXPECT_EQ(*h200().pci_bus_id.value, "0000:00:06.0");
}

TEST(BuiltinH200, EnginesRunlistsAndCopyWiringAreTheH200s) {
    // root-h200.txt lines: "  runlist 1    COPY2".
    const std::string root = fixture("live-h200/root-h200.txt");
    std::map<std::string, int> logged;
    const std::regex line(R"(\n  runlist (\d+) +([^;\n]+))");
    for (auto it = std::sregex_iterator(root.begin(), root.end(), line); it != std::sregex_iterator(); ++it) {
        std::stringstream names((*it)[2].str());
        for (std::string entry; std::getline(names, entry, ',');) {
            std::istringstream words(entry);  // "COPY0 (GRCE)": the first word is the engine
            std::string name;
            words >> name;
            logged[name] = std::stoi((*it)[1]);
        }
    }
    ASSERT_EQ(h200().engines.size(), 23u);
    std::map<std::string, int> runlists;
    for (const Engine& engine : h200().engines)
        if (engine.runlist.known()) runlists[engine.name] = *engine.runlist.value;
        else EXPECT_EQ(engine.name, "SW");
    EXPECT_EQ(runlists, logged);
    EXPECT_EQ(runlists.at("COPY4"), 10);
    const auto& lces = h200().copy_engines.lces;
    ASSERT_EQ(lces.size(), 5u);
    const std::uint32_t masks[] = {0x5000, 0xa000, 0x5000, 0xa000, 0x0fff};
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(lces[i].index, static_cast<int>(i));
        EXPECT_EQ(lces[i].pce_mask, masks[i]) << "LCE" << i;
        EXPECT_EQ(lces[i].grce, i < 2) << "LCE" << i;
        EXPECT_EQ(lces[i].shared, i < 4) << "LCE" << i;
    }
    EXPECT_EQ(*h200().copy_engines.pce_count.value, 16);
}
