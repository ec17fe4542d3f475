#pragma once
// Recorded inputs for the probe tests: the H200 mask-bit scan (tests/fixtures/h200, read with the
// snapshot generator's log reader) as a ProbeReport, and the global SM order printed by the RM-control
// measurement on the H100 (tests/fixtures/h100-rmctrl, " sm K (gpcId, localTpcId, localSmId,
// globalTpcId, virtualGpcId, ...)" lines).
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "recorded_logs.hpp"
#include "sources/probe_report.hpp"
#include "sources/source_status.hpp"

namespace gpupart::test {

inline std::string fixture_text(const std::string& relative) {
    return recorded::read_text(std::string(GPUPART_FIXTURES) + "/" + relative);
}

// The H200 recording as the probe would have reported it (bits 0..127, anchor 0).
inline ProbeReport h200_recorded_report() {
    const recorded::MaskBitsLog log = recorded::parse_maskbits_log(fixture_text("h200/2026-11-22-maskbits.log"));
    ProbeReport report;
    report.device = ProbeDevice{0, "NVIDIA H200", "GPU-not-recorded", "0000:00:06.0", "9.0", log.sm_count, 13000, "580.159.04"};
    report.descriptor_version = log.descriptor_version;
    report.mask_width = 128;
    report.anchor_bit = 0;
    for (int bit = 0; bit < 128; ++bit) report.bit_sms[bit] = {};
    for (const auto& [bit, sms] : log.bit_sms) report.bit_sms[bit] = sms;
    report.launches = 129;
    return report;
}

inline std::vector<SmOrderEntry> h100_recorded_sm_order() {
    std::vector<SmOrderEntry> order;
    const std::string text = fixture_text("h100-rmctrl/replies-nobody.txt");
    static const std::regex line(R"( sm (\d+) \((\d+), (\d+), \d+, (\d+), (\d+),)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it)
        order.push_back(SmOrderEntry{std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4]),
                                     std::stoi((*it)[5])});
    return order;
}

}  // namespace gpupart::test
