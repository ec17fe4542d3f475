// The probe's report format: what gpupart-probe writes, gpupart reads back exactly, and anything
// incomplete or malformed is refused with the line it stopped at.
#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "probe_fixtures.hpp"
#include "sources/probe_report.hpp"
#include "../lib/thrown_message.hpp"

using gpupart::ProbeReport;
using gpupart::UserError;

namespace {

std::string error_of(const std::string& text) {
    return gpupart::test::thrown_message([&] { gpupart::parse_probe_report(text); }, "(accepted)");
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST(ProbeReport, RoundTripsTheRecordedH200) {
    ProbeReport report = gpupart::test::h200_recorded_report();
    report.elapsed_ms = 412.5;
    const std::string text = gpupart::write_probe_report(report);
    EXPECT_NE(text.find("\nbit 0 0 1\n"), std::string::npos);
    EXPECT_NE(text.find("\nbit 4 -\n"), std::string::npos);
    EXPECT_NE(text.find("\nbit 83 130 131\n"), std::string::npos);
    EXPECT_NE(text.find("\ndescriptor 0x40\n"), std::string::npos);
    const ProbeReport back = gpupart::parse_probe_report(text);
    EXPECT_EQ(back.device.name, "NVIDIA H200");
    EXPECT_EQ(back.device.sm_count, 132);
    EXPECT_EQ(back.descriptor_version, 0x40);
    EXPECT_EQ(back.mask_width, 128);
    EXPECT_EQ(back.anchor_bit, 0);
    EXPECT_EQ(back.bit_sms, report.bit_sms);
    EXPECT_EQ(back.launches, 129);
    EXPECT_DOUBLE_EQ(back.elapsed_ms, 412.5);
    EXPECT_EQ(gpupart::write_probe_report(back), text);
}

TEST(ProbeReport, RefusesWhatIsNotACompleteReport) {
    const std::string good = gpupart::write_probe_report(gpupart::test::h200_recorded_report());
    EXPECT_EQ(error_of("error: cuInit: CUDA error 100 (no CUDA-capable device is detected)\n"),
              "probe output does not start with 'gpupart-probe': not a probe report");
    EXPECT_EQ(error_of(good.substr(0, good.find("launches"))), "probe output ends before its 'end' line: the probe was cut off");
    EXPECT_EQ(error_of(replace(good, "gpupart-probe 2", "gpupart-probe 3")),
              "probe output line 1: format version is not 1 to 2 ('gpupart-probe 3')");
    EXPECT_EQ(error_of(replace(good, "bit 5 -\n", "")), "probe output lists 127 bits, not bits 0-127");
    EXPECT_EQ(error_of(replace(good, "bit 5 -\n", "bit 4 -\n")), "probe output line 18: bit listed twice ('bit 4 -')");
    EXPECT_EQ(error_of(replace(good, "bit 1 16 17\n", "bit 1 16 16\n")), "probe output line 14: an SM is listed twice ('bit 1 16 16')");
    EXPECT_EQ(error_of(replace(good, "bit 1 16 17\n", "bit 1 16 x\n")), "probe output line 14: expected a number ('bit 1 16 x')");
    EXPECT_EQ(error_of(replace(good, "anchor 0", "anchor 4")), "probe output: anchor bit 4 is not a real TPC");
    EXPECT_EQ(error_of(replace(good, "width 128", "width 96")), "probe output: mask width 96 is neither 64 nor 128");
    EXPECT_EQ(error_of(replace(good, "sms 132\n", "")), "probe output has no 'sms' line");
    EXPECT_EQ(error_of(replace(good, "sms 132\n", "sms 132\nsms 132\n")), "probe output line 8: repeated line ('sms 132')");
    EXPECT_EQ(error_of(replace(good, "descriptor 0x40", "descriptor 64")),
              "probe output line 10: descriptor version is not hex ('descriptor 64')");
    EXPECT_EQ(error_of(good + "bit 0 0 1\n"), "probe output line 144: text after 'end' ('bit 0 0 1')");
    EXPECT_EQ(error_of(replace(good, "launches", "lunches")), "probe output line 141: unknown line ('lunches 129')");
    EXPECT_EQ(error_of(replace(good, "elapsed_ms 0.0", "elapsed_ms -3")),
              "probe output line 142: expected milliseconds ('elapsed_ms -3')");
}

// The stream-mask line (format 2): verified with its offset, or not with why; a version 1 report has none.
TEST(ProbeReport, CarriesTheStreamMaskVerdict) {
    ProbeReport report = gpupart::test::h200_recorded_report();
    report.stream_mask_offset = 0x51c;
    report.stream_mask_note = "each of the 66 TPC numbers ran exactly on its SMs (68 launches)";
    std::string text = gpupart::write_probe_report(report);
    EXPECT_NE(text.find("\nstream_mask 0x51c verified each of the 66 TPC numbers ran exactly on its SMs (68 launches)\n"),
              std::string::npos);
    ProbeReport back = gpupart::parse_probe_report(text);
    EXPECT_EQ(back.stream_mask_offset, 0x51c);
    EXPECT_EQ(back.stream_mask_note, report.stream_mask_note);
    EXPECT_EQ(gpupart::write_probe_report(back), text);

    report.stream_mask_offset = -1;
    report.stream_mask_note = "stream mask TPC 3 ran on SMs 8,9\nnot on SMs 6,7";  // a newline never splits the line
    text = gpupart::write_probe_report(report);
    back = gpupart::parse_probe_report(text);
    EXPECT_EQ(back.stream_mask_offset, -1);
    EXPECT_EQ(back.stream_mask_note, "stream mask TPC 3 ran on SMs 8,9 not on SMs 6,7");

    // A version 1 report (no stream_mask line) still reads: not checked.
    const std::string old = replace(replace(text, "gpupart-probe 2", "gpupart-probe 1"),
                                    "stream_mask none stream mask TPC 3 ran on SMs 8,9 not on SMs 6,7\n", "");
    back = gpupart::parse_probe_report(old);
    EXPECT_EQ(back.stream_mask_offset, -1);
    EXPECT_TRUE(back.stream_mask_note.empty());
    // ... and a version 1 report may not carry one.
    EXPECT_NE(error_of(replace(text, "gpupart-probe 2", "gpupart-probe 1")).find("unknown line ('stream_mask none"),
              std::string::npos);
}

TEST(ProbeReport, RefusesAMalformedStreamMaskLine) {
    ProbeReport report = gpupart::test::h200_recorded_report();
    report.stream_mask_offset = 0x51c;
    report.stream_mask_note = "shown";
    const std::string good = gpupart::write_probe_report(report);
    const std::string line = "stream_mask 0x51c verified shown";
    const std::string expected = "expected 'stream_mask 0x<offset> verified <why>' or 'stream_mask none <why>'";
    for (const std::string bad : {"stream_mask 0x51c", "stream_mask 0x51c verified", "stream_mask 0x51c verified ",
                                  "stream_mask 51c verified shown", "stream_mask 0x51c checked shown"})
        EXPECT_NE(error_of(replace(good, line, bad)).find(expected), std::string::npos) << bad;
    EXPECT_NE(error_of(replace(good, line, "stream_mask none")).find("a stream_mask line says why"), std::string::npos);
    EXPECT_NE(error_of(replace(good, line, "stream_mask 0xzz verified shown")).find("expected a number"), std::string::npos);
    EXPECT_NE(error_of(replace(good, line, "stream_mask 0x10000 verified shown")).find("beyond 64 KiB"), std::string::npos);
    EXPECT_NE(error_of(replace(good, line, line + "\n" + line)).find("repeated line"), std::string::npos);
}
