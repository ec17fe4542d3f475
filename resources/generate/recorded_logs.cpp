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

EngineRunlists parse_engine_runlists(const std::string& engines_text) {
    // "  runlist 0    GR0, COPY0 (GRCE), COPY1 (GRCE); channels 1-3" as `gpupart engines` prints it;
    // "runlist ?" lines name engines with no runlist and are skipped.
    EngineRunlists out;
    const std::regex line(R"(\n  runlist (\d+) +([^;\n]+)(?:; channels ([0-9, -]+))?)");
    for (auto it = std::sregex_iterator(engines_text.begin(), engines_text.end(), line); it != std::sregex_iterator(); ++it) {
        const int id = std::stoi((*it)[1]);
        std::istringstream names((*it)[2].str());
        for (std::string name; std::getline(names, name, ',');) {
            name = std::regex_replace(name, std::regex(R"(^ +| *\(GRCE\) *$| +$)"), "");
            if (name.empty() || !out.engine_runlist.emplace(name, id).second)
                throw std::runtime_error("engines listing: engine '" + name + "' is empty or on two runlists");
        }
        if ((*it)[3].matched) {
            std::istringstream ranges((*it)[3].str());
            for (std::string range; std::getline(ranges, range, ',');) {
                const auto dash = range.find('-');
                const int first = std::stoi(range.substr(0, dash));
                const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
                for (int channel = first; channel <= last; ++channel) out.channels[id].push_back(channel);
            }
        }
    }
    if (out.engine_runlist.empty()) throw std::runtime_error("engines listing: no 'runlist N  ENGINES' line");
    return out;
}

}  // namespace gpupart::recorded
