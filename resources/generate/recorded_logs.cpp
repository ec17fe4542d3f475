#include "recorded_logs.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace gpupart::recorded {
namespace {

std::vector<int> numbers_in(const std::string& text) {
    std::vector<int> out;
    std::istringstream in(text);
    int value = 0;
    while (in >> value) out.push_back(value);
    return out;
}

std::string line_after(const std::string& text, const std::string& marker) {
    const auto at = text.find(marker);
    if (at == std::string::npos) throw std::runtime_error("log has no line '" + marker + "'");
    const auto start = text.find('\n', at);
    const auto end = text.find('\n', start + 1);
    return text.substr(start + 1, end - start - 1);
}

}  // namespace

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

MaskBitsLog parse_maskbits_log(const std::string& text) {
    MaskBitsLog log;
    std::smatch match;
    if (!std::regex_search(text, match, std::regex(R"(SMs=(\d+))")))
        throw std::runtime_error("maskbits log: no SMs= line");
    log.sm_count = std::stoi(match[1]);
    if (!std::regex_search(text, match, std::regex(R"(tmdver=0x([0-9a-fA-F]+))")))
        throw std::runtime_error("maskbits log: no tmdver");
    log.descriptor_version = std::stoi(match[1], nullptr, 16);

    // " 1:16,17, 2:32,33, ... 4:- ..." : bits 1..127 with bit 0 as the anchor.
    const std::string map_line = line_after(text, "bit->sm (anchored on bit 0):");
    const std::regex entry(R"((\d+):(-|\d+(?:,\d+)*))");
    for (auto it = std::sregex_iterator(map_line.begin(), map_line.end(), entry); it != std::sregex_iterator(); ++it) {
        const int bit = std::stoi((*it)[1]);
        const std::string sms = (*it)[2];
        if (sms == "-") {
            log.holes.push_back(bit);
            continue;
        }
        std::string spaced = sms;
        for (char& c : spaced)
            if (c == ',') c = ' ';
        log.bit_sms[bit] = numbers_in(spaced);
    }
    // Bit 0 is the anchor of every run above; its SMs are those of the "TPC0-3 only" run that
    // bits 1-3 do not explain.
    if (!std::regex_search(text, match, std::regex(R"(masked \(TPC0-3 only\) distinct SMs: \d+ : ([0-9 ]+))")))
        throw std::runtime_error("maskbits log: no 'TPC0-3 only' line");
    std::vector<int> bit0 = numbers_in(match[1]);
    for (int bit = 1; bit <= 3; ++bit)
        for (int sm : log.bit_sms.at(bit)) std::erase(bit0, sm);
    log.bit_sms[0] = bit0;
    return log;
}

std::vector<std::vector<int>> parse_cluster_groups(const std::string& corun_text) {
    const auto start = corun_text.find("cluster8:");
    const auto end = corun_text.find("---", start);
    if (start == std::string::npos || end == std::string::npos) throw std::runtime_error("corun log: no cluster8 block");
    std::vector<std::vector<int>> groups;
    std::istringstream in(corun_text.substr(start, end - start));
    std::string line;
    while (std::getline(in, line)) {
        const auto open = line.find('[');
        const auto close = line.find(']');
        if (open == std::string::npos || close == std::string::npos) continue;
        groups.push_back(numbers_in(line.substr(open + 1, close - open - 1)));
    }
    return groups;
}

std::string parse_pci_bus_id(const std::string& env_text) {
    std::smatch match;
    if (!std::regex_search(env_text, match, std::regex(R"(\+ echo /sys/bus/pci/devices/([0-9a-f:.]+))")))
        throw std::runtime_error("env log: no NVIDIA PCI device line");
    return match[1];
}

RmReplies parse_rm_replies(const std::string& replies_text, const std::string& replies2_text) {
    RmReplies replies;
    const std::string engines = line_after(replies_text, "ENG_V2 0x20800170 st=0x0");
    std::smatch match;
    if (!std::regex_search(engines, match, std::regex(R"(\d+ \(([0-9, ]+)\))")))
        throw std::runtime_error("rm replies: cannot read the ENG_V2 engine list");
    std::string list = match[1];
    for (char& c : list)
        if (c == ',') c = ' ';
    for (int type : numbers_in(list)) replies.engine_types.push_back(static_cast<std::uint32_t>(type));

    // " CE 9 pce 0x0 0x5000 caps 0x0 e303": engine type, status, PCE mask, status, caps bytes.
    const std::regex ce(R"( CE (\d+) pce 0x0 0x([0-9a-f]+) caps 0x0 ([0-9a-f]+))");
    for (auto it = std::sregex_iterator(replies_text.begin(), replies_text.end(), ce); it != std::sregex_iterator(); ++it) {
        const int type = std::stoi((*it)[1]);
        replies.copy_engines.push_back({type - 9, static_cast<std::uint32_t>(std::stoul((*it)[2], nullptr, 16)), (*it)[3]});
    }

    // " base [...] rlId (0, 0, 0, 1, 3, 10)": runlists of GR0 and COPY0..4, in that order (RMCTRL.md).
    if (!std::regex_search(replies2_text, match, std::regex(R"(rlId \(([0-9, ]+)\))")))
        throw std::runtime_error("rm replies2: no RLBASE runlist ids");
    std::string ids = match[1];
    for (char& c : ids)
        if (c == ',') c = ' ';
    const std::vector<int> runlists = numbers_in(ids);
    const std::uint32_t order[] = {0x01, 0x09, 0x0a, 0x0b, 0x0c, 0x0d};
    if (runlists.size() != std::size(order)) throw std::runtime_error("rm replies2: expected 6 runlist ids");
    for (std::size_t i = 0; i < runlists.size(); ++i) replies.runlist_of[order[i]] = runlists[i];
    return replies;
}

}  // namespace gpupart::recorded
