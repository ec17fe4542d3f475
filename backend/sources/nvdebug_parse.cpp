#include "sources/nvdebug_parse.hpp"

#include <regex>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        const auto stop = end == std::string_view::npos ? text.size() : end;
        lines.emplace_back(text.substr(start, stop - start));
        start = stop + 1;
    }
    return lines;
}

[[noreturn]] void fail(const char* file, std::size_t line, const std::string& text, const char* what) {
    throw UserError(fmt::format("{} line {}: {} ('{}')", file, line + 1, what, text));
}

int integer(const std::string& digits) { return std::stoi(digits); }

// "%#.8x" and "%#018llx": the kernel writes "0x" and the digits; glibc drops the "0x" for zero.
std::uint64_t hex(const std::string& text) { return std::stoull(text.starts_with("0x") ? text.substr(2) : text, nullptr, 16); }

const std::regex kRule(R"(^ *\+-{21}\+$)");

// The text between a box line's bars, trimmed: "  |  VID_MEM|" -> "VID_MEM".
std::string box_content(const std::string& line) {
    const auto open = line.find('|');
    const auto close = line.rfind('|');
    const std::string inside = line.substr(open + 1, close - open - 1);
    const auto first = inside.find_first_not_of(' ');
    const auto last = inside.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : inside.substr(first, last - first + 1);
}

}  // namespace

std::uint32_t parse_nvdebug_register(std::string_view text) {
    static const std::regex value(R"(^(0x[0-9a-fA-F]{1,8}|0)\n?$)");
    const std::string copy(text);
    if (!std::regex_match(copy, value)) throw UserError(fmt::format("'{}' is not a register value nvdebug prints", copy.substr(0, 40)));
    return static_cast<std::uint32_t>(hex(copy.substr(0, copy.find('\n'))));
}

std::vector<NvdebugEngine> parse_nvdebug_device_info(std::string_view text) {
    static const std::regex type(R"(^\| Engine Type: +(\d+) \((.*)\)$)");
    static const std::regex instance(R"(^\| {10} ?instance (\d+)$)");
    static const std::regex field(R"(^\| (Fault ID|Reset ID|Is Engine|Runlist Eng\. ID|Host's Engine ID|Runlist ID|Interrupt ID): +(\d+)$)");
    static const std::regex base(R"(^\| (BAR0 Base|RL Base:) +((0x)?[0-9a-f]+)$)");
    std::vector<NvdebugEngine> engines;
    NvdebugEngine current;
    bool open = false;
    const std::vector<std::string> lines = lines_of(text);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        const std::string& line = lines[n];
        std::smatch m;
        if (std::regex_match(line, kRule)) {
            if (!open) fail("device_info", n, line, "an entry with no fields");
            engines.push_back(current);
            current = NvdebugEngine{};
            open = false;
            continue;
        }
        open = true;
        if (std::regex_match(line, m, type)) {
            current.engine_type = integer(m[1]);
            current.type_name = m[2];
        } else if (std::regex_match(line, m, instance)) {
            current.instance = integer(m[1]);
        } else if (std::regex_match(line, m, field)) {
            const std::string name = m[1];
            const int value = integer(m[2]);
            if (name == "Fault ID") current.fault_id = value;
            else if (name == "Reset ID") current.reset_id = value;
            else if (name == "Is Engine") current.is_engine = value != 0;
            else if (name == "Runlist Eng. ID") current.runlist_engine_id = value;
            else if (name == "Host's Engine ID") current.host_engine_id = value;
            else if (name == "Runlist ID") current.runlist_id = value;
            else current.interrupt_id = value;
        } else if (std::regex_match(line, m, base)) {
            const auto value = static_cast<std::uint32_t>(hex(m[2]));
            if (m[1] == "BAR0 Base") current.pri_base = value;
            else current.runlist_pri_base = value;
        } else {
            fail("device_info", n, line, "not a line nvdebug prints");
        }
    }
    if (open) throw UserError("device_info ends inside an entry: the table was cut off");
    return engines;
}

std::vector<NvdebugCopyLink> parse_nvdebug_copy_topology(std::string_view text) {
    static const std::regex link(R"(^(GRCE(\d)|LCE(\d{2})) -> (PCE(\d{2})|LCE(\d{2})|GRCE(\d))$)");
    std::vector<NvdebugCopyLink> links;
    const std::vector<std::string> lines = lines_of(text);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        std::smatch m;
        if (!std::regex_match(lines[n], m, link)) fail("copy_topology", n, lines[n], "not a line nvdebug prints");
        NvdebugCopyLink l;
        l.from = m[1];
        l.from_lce = integer(m[2].matched ? m[2] : m[3]);
        if (m[5].matched) {
            l.to = NvdebugCopyLink::To::pce;
            l.to_index = integer(m[5]);
        } else {
            l.to = NvdebugCopyLink::To::lce;
            l.to_index = integer(m[6].matched ? m[6] : m[7]);
        }
        links.push_back(l);
    }
    return links;
}

NvdebugRunlist parse_nvdebug_runlist(std::string_view text) {
    static const std::regex tsg_head(R"(^\+---- TSG Entry (\d+) *---\+$)");
    static const std::regex tsg_field(R"(^\| (Scale|Timeout|Length): (\d+) *\|$)");
    static const std::regex channel_head(R"(^( *)\+- Channel Entry (\d+) *-\+$)");
    static const std::regex selector(R"(^ *\| Runqueue Selector: (\d)\|$)");
    static const std::regex pointer_label(R"(^ *\| Instance PTR: +\|$)");
    static const std::regex pointer(R"(^ *\| {3}((0x)?[0-9a-f]{16,18})\|$)");
    static const std::regex target(R"(^ *\| +([A-Z_]+)\|$)");
    static const std::regex key_value(R"(^ *\| ?([^|:]+): *([^|]*?) *\|$)");
    static const std::regex box_line(R"(^ *\|.*\|$)");
    static const std::regex missing(R"(^ *\[missing channel\]$)");
    // Value lines under a key with an empty value: a pointer, an aperture, a volatility.
    static const std::regex continuation(R"(^((0x)?[0-9a-f]{16,18}|VID_MEM|SYS_MEM_COHERENT|SYS_MEM_NONCOHERENT|INVALID|volatile|non-volatile)$)");
    static const std::regex spaced_value(R"(^(.*?) +(\S+)$)");
    NvdebugRunlist runlist;
    const std::vector<std::string> lines = lines_of(text);
    std::size_t n = 0;
    auto next = [&](const std::regex& pattern, std::smatch& m, const char* what) {
        if (n >= lines.size()) throw UserError(fmt::format("runlist ends inside an entry: expected {}", what));
        if (!std::regex_match(lines[n], m, pattern)) fail("runlist", n, lines[n], what);
        ++n;
    };
    while (n < lines.size()) {
        std::smatch m;
        const std::string& line = lines[n];
        if (std::regex_match(line, m, tsg_head)) {
            NvdebugTsg tsg;
            tsg.id = integer(m[1]);
            ++n;
            for (const char* name : {"Scale", "Timeout", "Length"}) {
                next(tsg_field, m, "a Scale, Timeout or Length line");
                if (m[1] != name) fail("runlist", n - 1, lines[n - 1], "TSG fields out of order");
                const int value = integer(m[2]);
                if (m[1] == "Scale") tsg.timeslice_scale = value;
                else if (m[1] == "Timeout") tsg.timeslice_timeout = value;
                else tsg.length = value;
            }
            next(kRule, m, "the end of the TSG entry");
            runlist.tsgs.push_back(std::move(tsg));
        } else if (std::regex_match(line, m, missing)) {
            if (runlist.tsgs.empty()) fail("runlist", n, line, "a missing channel before any TSG");
            ++runlist.tsgs.back().missing_channels;
            ++n;
        } else if (std::regex_match(line, m, channel_head)) {
            const bool in_tsg = !m[1].str().empty();
            NvdebugChannel channel;
            channel.id = integer(m[2]);
            ++n;
            std::string last_key;
            while (true) {
                if (n >= lines.size()) throw UserError(fmt::format("runlist ends inside channel {}", channel.id));
                const std::string& inner = lines[n];
                std::smatch f;
                ++n;
                if (std::regex_match(inner, kRule)) break;
                if (std::regex_match(inner, f, selector)) {
                    channel.runqueue_selector = integer(f[1]);
                } else if (std::regex_match(inner, pointer_label)) {
                    next(pointer, f, "the instance pointer");
                    channel.instance_ptr = hex(f[1]);
                    next(target, f, "the instance target");
                    channel.instance_target = f[1];
                } else if (std::regex_match(inner, f, key_value)) {
                    last_key = f[1];  // "| WFI PTR:            |": an empty value continues on the next lines
                    channel.details.emplace(last_key, f[2]);
                } else if (std::regex_match(inner, box_line)) {
                    const std::string content = box_content(inner);
                    std::smatch c;
                    if (content.starts_with("=")) {  // a section header: "|= Instance Block ====|"
                        last_key.clear();
                    } else if (!last_key.empty() && std::regex_match(content, continuation)) {
                        std::string& joined = channel.details[last_key];
                        joined += joined.empty() ? content : " " + content;
                    } else if (std::regex_match(content, c, spaced_value)) {  // "Virtual address?   0", "CPU SC00 ASID  5"
                        last_key.clear();
                        channel.details.emplace(c[1], c[2]);
                    } else {
                        fail("runlist", n - 1, inner, "not a line of a channel entry");
                    }
                } else {
                    fail("runlist", n - 1, inner, "not a line of a channel entry");
                }
            }
            if (in_tsg && !runlist.tsgs.empty()) runlist.tsgs.back().channels.push_back(std::move(channel));
            else if (in_tsg) fail("runlist", n, lines[n - 1], "an indented channel before any TSG");
            else runlist.bare_channels.push_back(std::move(channel));
        } else {
            fail("runlist", n, line, "not a line nvdebug prints");
        }
    }
    return runlist;
}

}  // namespace gpupart
