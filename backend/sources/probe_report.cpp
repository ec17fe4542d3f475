#include "sources/probe_report.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

std::string sms_text(const std::vector<int>& sms) {
    return sms.empty() ? "-" : fmt::format("{}", fmt::join(sms, " "));
}

class Lines {
public:
    explicit Lines(std::string_view text) : text_(text) {}

    bool next() {
        if (position_ >= text_.size()) return false;
        const auto end = text_.find('\n', position_);
        const auto stop = end == std::string_view::npos ? text_.size() : end;
        line_ = text_.substr(position_, stop - position_);
        position_ = stop + 1;
        ++number_;
        const auto space = line_.find(' ');
        key_ = line_.substr(0, space);
        rest_ = space == std::string_view::npos ? std::string_view{} : line_.substr(space + 1);
        return true;
    }
    std::string_view key() const { return key_; }
    std::string_view rest() const { return rest_; }

    [[noreturn]] void fail(const std::string& what) const {
        throw UserError(fmt::format("probe output line {}: {} ('{}')", number_, what, line_));
    }
    long number(std::string_view text, int base = 10) const {
        long value = 0;
        const auto* end = text.data() + text.size();
        const auto [ptr, error] = std::from_chars(text.data(), end, value, base);
        if (error != std::errc{} || ptr != end || text.empty()) fail("expected a number");
        return value;
    }
    int small(std::string_view text, int base = 10) const {
        const long value = number(text, base);
        if (value < 0 || value > 1000000000) fail("number out of range");
        return static_cast<int>(value);
    }

private:
    std::string_view text_;
    std::size_t position_ = 0;
    int number_ = 0;
    std::string_view line_, key_, rest_;
};

std::vector<int> parse_sms(const Lines& lines, std::string_view text) {
    std::vector<int> sms;
    if (text == "-") return sms;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto space = text.find(' ', start);
        const auto stop = space == std::string_view::npos ? text.size() : space;
        sms.push_back(lines.small(text.substr(start, stop - start)));
        if (space == std::string_view::npos) break;
        start = space + 1;
    }
    if (std::set<int>(sms.begin(), sms.end()).size() != sms.size()) lines.fail("an SM is listed twice");
    return sms;
}

// The note ends the line: a newline in it would start a line of its own.
std::string one_line(const std::string& text) {
    std::string out = text;
    std::replace_if(out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return out;
}

// "0x51c verified WHY" or "none WHY".
void parse_stream_mask(const Lines& lines, std::string_view rest, ProbeReport& report) {
    const auto space = rest.find(' ');
    const std::string_view first = rest.substr(0, space);
    const std::string_view after = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (first == "none") {
        if (after.empty()) lines.fail("a stream_mask line says why");
        report.stream_mask_note = after;
        return;
    }
    if (!first.starts_with("0x") || !after.starts_with("verified ") || after.size() == 9)
        lines.fail("expected 'stream_mask 0x<offset> verified <why>' or 'stream_mask none <why>'");
    const int offset = lines.small(first.substr(2), 16);
    if (offset >= 65536) lines.fail("a stream mask offset beyond 64 KiB");
    report.stream_mask_offset = offset;
    report.stream_mask_note = after.substr(9);
}

}  // namespace

std::string write_probe_report(const ProbeReport& report) {
    const ProbeDevice& d = report.device;
    std::string out = fmt::format("gpupart-probe {}\nindex {}\nname {}\nuuid {}\npci {}\ncc {}\nsms {}\ncuda {}\ndriver {}\n",
                                  ProbeReport::kFormatVersion, d.index, d.name, d.uuid, d.pci_bus_id,
                                  d.compute_capability, d.sm_count, d.cuda_driver_version, d.driver_version);
    out += fmt::format("descriptor {:#x}\nwidth {}\nanchor {}\n", report.descriptor_version, report.mask_width,
                       report.anchor_bit);
    for (const auto& [bit, sms] : report.bit_sms) out += fmt::format("bit {} {}\n", bit, sms_text(sms));
    if (report.stream_mask_offset >= 0)
        out += fmt::format("stream_mask {:#x} verified {}\n", report.stream_mask_offset, one_line(report.stream_mask_note));
    else if (!report.stream_mask_note.empty())
        out += fmt::format("stream_mask none {}\n", one_line(report.stream_mask_note));
    out += fmt::format("launches {}\nelapsed_ms {:.1f}\nend\n", report.launches, report.elapsed_ms);
    return out;
}

ProbeReport parse_probe_report(std::string_view text) {
    ProbeReport report;
    Lines lines(text);
    if (!lines.next() || lines.key() != "gpupart-probe")
        throw UserError("probe output does not start with 'gpupart-probe': not a probe report");
    const int format = lines.small(lines.rest());
    if (format < ProbeReport::kOldestFormatVersion || format > ProbeReport::kFormatVersion)
        lines.fail(fmt::format("format version is not {} to {}", ProbeReport::kOldestFormatVersion, ProbeReport::kFormatVersion));
    std::set<std::string, std::less<>> seen;
    bool ended = false;
    while (lines.next()) {
        const std::string_view key = lines.key();
        const std::string_view rest = lines.rest();
        if (ended) lines.fail("text after 'end'");
        if (key != "bit" && !seen.insert(std::string(key)).second) lines.fail("repeated line");
        ProbeDevice& d = report.device;
        if (key == "index") d.index = lines.small(rest);
        else if (key == "name") d.name = rest;
        else if (key == "uuid") d.uuid = rest;
        else if (key == "pci") d.pci_bus_id = rest;
        else if (key == "cc") d.compute_capability = rest;
        else if (key == "sms") d.sm_count = lines.small(rest);
        else if (key == "cuda") d.cuda_driver_version = lines.small(rest);
        else if (key == "driver") d.driver_version = rest;
        else if (key == "descriptor") {
            if (!rest.starts_with("0x")) lines.fail("descriptor version is not hex");
            report.descriptor_version = lines.small(rest.substr(2), 16);
        } else if (key == "width") report.mask_width = lines.small(rest);
        else if (key == "anchor") report.anchor_bit = lines.small(rest);
        else if (key == "bit") {
            const auto space = rest.find(' ');
            if (space == std::string_view::npos) lines.fail("a bit line needs its SMs or '-'");
            const int bit = lines.small(rest.substr(0, space));
            if (!report.bit_sms.emplace(bit, parse_sms(lines, rest.substr(space + 1))).second) lines.fail("bit listed twice");
        } else if (key == "stream_mask" && format >= 2) {
            parse_stream_mask(lines, rest, report);
        } else if (key == "launches") report.launches = lines.small(rest);
        else if (key == "elapsed_ms") {
            const auto* end = rest.data() + rest.size();
            const auto [ptr, error] = std::from_chars(rest.data(), end, report.elapsed_ms);
            if (error != std::errc{} || ptr != end || report.elapsed_ms < 0) lines.fail("expected milliseconds");
        } else if (key == "end") ended = true;
        else lines.fail("unknown line");
    }
    if (!ended) throw UserError("probe output ends before its 'end' line: the probe was cut off");
    for (const char* required : {"index", "name", "uuid", "pci", "cc", "sms", "cuda", "driver", "descriptor", "width",
                                 "anchor", "launches", "elapsed_ms"})
        if (!seen.contains(std::string_view(required)))
            throw UserError(fmt::format("probe output has no '{}' line", required));
    if (report.mask_width != 64 && report.mask_width != 128)
        throw UserError(fmt::format("probe output: mask width {} is neither 64 nor 128", report.mask_width));
    if (static_cast<int>(report.bit_sms.size()) != report.mask_width || report.bit_sms.rbegin()->first != report.mask_width - 1)
        throw UserError(fmt::format("probe output lists {} bits, not bits 0-{}", report.bit_sms.size(), report.mask_width - 1));
    const auto anchor = report.bit_sms.find(report.anchor_bit);
    if (anchor == report.bit_sms.end() || anchor->second.empty())
        throw UserError(fmt::format("probe output: anchor bit {} is not a real TPC", report.anchor_bit));
    return report;
}

}  // namespace gpupart
