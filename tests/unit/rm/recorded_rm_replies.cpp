#include "recorded_rm_replies.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace gpupart::test {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Every number in `text` (decimal, or hex with 0x), in order.
std::vector<std::uint64_t> numbers_in(const std::string& text) {
    std::vector<std::uint64_t> numbers;
    const std::regex number(R"(0x[0-9a-fA-F]+|\d+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
        numbers.push_back(std::stoull(it->str(), nullptr, 0));
    return numbers;
}

std::uint32_t u32(std::uint64_t value) { return static_cast<std::uint32_t>(value); }

// Blocks start with "NAME 0xCMD st=0xSTATUS"; the lines indented below belong to them. Lines before
// the first block and unindented non-block lines are the preamble (version, ids), returned apart.
std::map<std::string, RecordedBlock> split_blocks(const std::vector<std::string>& lines, std::vector<std::string>& preamble) {
    const std::regex header(R"(^(\S.*) (0x[0-9a-f]+) st=(0x[0-9a-f]+)\s*$)");
    std::map<std::string, RecordedBlock> blocks;
    RecordedBlock* current = nullptr;
    for (const std::string& line : lines) {
        std::smatch match;
        if (std::regex_match(line, match, header)) {
            current = &blocks[match[1]];
            current->cmd = u32(std::stoull(match[2], nullptr, 16));
            current->status = u32(std::stoull(match[3], nullptr, 16));
        } else if (current && !line.empty() && line[0] == ' ') {
            current->lines.push_back(line.substr(line.find_first_not_of(' ')));
        } else {
            current = nullptr;
            preamble.push_back(line);
        }
    }
    return blocks;
}

const RecordedBlock& block(const std::map<std::string, RecordedBlock>& blocks, const std::string& name) {
    const auto it = blocks.find(name);
    if (it == blocks.end()) throw std::runtime_error("recorded replies: no " + name + " block");
    return it->second;
}

const std::string& first_line(const RecordedBlock& recorded, const std::string& name) {
    if (recorded.lines.empty()) throw std::runtime_error("recorded replies: " + name + " block is empty");
    return recorded.lines.front();
}

void read_preamble(const std::vector<std::string>& preamble, RecordedRm& rm) {
    const std::regex version(R"(^ver bytearray\(b'([^']+)'\) uid (\d+))");
    const std::regex card(R"(^gpu_id (0x[0-9a-f]+) minor (\d+))");
    for (const std::string& line : preamble) {
        std::smatch match;
        if (std::regex_search(line, match, version)) {
            rm.version = match[1];
            rm.uid = std::stoi(match[2]);
        } else if (std::regex_search(line, match, card)) {
            rm.gpu_id = u32(std::stoull(match[1], nullptr, 16));
            rm.minor = static_cast<unsigned>(std::stoul(match[2]));
        }
    }
    if (rm.version.empty() || rm.uid < 0) throw std::runtime_error("recorded replies: no 'ver ... uid' line");
}

void read_graphics(RecordedRm& rm) {
    rm.gpc_mask = u32(numbers_in(first_line(block(rm.blocks, "GPC_MASK"), "GPC_MASK")).at(0));
    const auto info = numbers_in(first_line(block(rm.blocks, "GR_INFO_V2"), "GR_INFO_V2"));
    for (std::size_t i = 0; i + 1 < info.size(); i += 2) rm.gr_info[u32(info[i])] = u32(info[i + 1]);
    const RecordedBlock& gr = block(rm.blocks, "GR_INFO_V2");
    const std::regex gpc(R"(^gpc (\d+) tpcmask (0x[0-9a-f]+) (0x[0-9a-f]+) numtpc (0x[0-9a-f]+) (\d+))");
    for (const std::string& line : gr.lines) {
        std::smatch match;
        if (!std::regex_search(line, match, gpc)) continue;
        rm.gpcs[std::stoi(match[1])] = RecordedTpc{u32(std::stoull(match[2], nullptr, 16)), u32(std::stoull(match[3], nullptr, 16)),
                                                   u32(std::stoull(match[4], nullptr, 16)), u32(std::stoull(match[5]))};
    }
    const RecordedBlock& order = block(rm.blocks, "SM_ORDER");
    const auto counts = numbers_in(first_line(order, "SM_ORDER"));
    rm.sm_count = static_cast<int>(counts.at(0));
    rm.tpc_count = static_cast<int>(counts.at(1));
    for (std::size_t i = 1; i < order.lines.size(); ++i) {
        const auto values = numbers_in(order.lines[i]);  // "sm K (nine fields)"
        if (values.size() != 10 || values[0] != rm.sm_order.size())
            throw std::runtime_error("recorded replies: SM_ORDER line '" + order.lines[i] + "'");
        std::array<std::uint16_t, 9> entry{};
        for (std::size_t f = 0; f < 9; ++f) entry[f] = static_cast<std::uint16_t>(values[f + 1]);
        rm.sm_order.push_back(entry);
    }
    for (const std::string& line : block(rm.blocks, "GRFS").lines) {
        const std::regex query(R"(\((\d+), (\d+), (\d+), \((\d+), (\d+), (\d+)\)\))");
        for (auto it = std::sregex_iterator(line.begin(), line.end(), query); it != std::sregex_iterator(); ++it)
            rm.grfs.push_back(RecordedGrfs{static_cast<std::uint16_t>(std::stoul((*it)[1])), u32(std::stoull((*it)[3])),
                                           {u32(std::stoull((*it)[4])), u32(std::stoull((*it)[5])), u32(std::stoull((*it)[6]))}});
    }
}

void read_engines(RecordedRm& rm) {
    const RecordedBlock& engines = block(rm.blocks, "ENG_V2");
    const auto list = numbers_in(first_line(engines, "ENG_V2"));
    for (std::size_t i = 1; i < list.size(); ++i) rm.engines.push_back(u32(list[i]));
    if (list.at(0) != rm.engines.size()) throw std::runtime_error("recorded replies: ENG_V2 count does not match its list");
    const std::regex ce(R"(^CE (\d+) pce (0x[0-9a-f]+) (0x[0-9a-f]+) caps)");
    for (const std::string& line : engines.lines) {
        std::smatch match;
        if (std::regex_search(line, match, ce))
            rm.copy_engines[u32(std::stoull(match[1]))] = RecordedCe{u32(std::stoull(match[2], nullptr, 16)), u32(std::stoull(match[3], nullptr, 16))};
    }
    std::smatch match;
    const std::string& caps = first_line(block(rm.blocks, "CE_ALLCAPS"), "CE_ALLCAPS");
    if (!std::regex_search(caps, match, std::regex(R"(present (0x[0-9a-f]+) ([0-9a-f]+))")))
        throw std::runtime_error("recorded replies: CE_ALLCAPS line '" + caps + "'");
    rm.ce_present = std::stoull(match[1], nullptr, 16);
    rm.ce_caps_bytes = hex_bytes(match[2]);
    const auto fifo = numbers_in(first_line(block(rm.blocks, "FIFO_INFO"), "FIFO_INFO"));
    for (std::size_t i = 0; i + 1 < fifo.size(); i += 2) rm.fifo_info.emplace_back(u32(fifo[i]), u32(fifo[i + 1]));
    const auto smc = numbers_in(first_line(block(rm.blocks, "GPU_INFO_V2"), "GPU_INFO_V2"));
    rm.smc = {u32(smc.at(0)), u32(smc.at(1))};
}

void read_replies2(RecordedRm& rm) {
    rm.device_instance = u32(numbers_in(first_line(block(rm.blocks2, "IDINFO_V2"), "IDINFO_V2")).at(0));
    const RecordedBlock& runlists = block(rm.blocks2, "RLBASE");
    std::smatch match;
    const std::string& line = first_line(runlists, "RLBASE");
    if (!std::regex_search(line, match, std::regex(R"(base \[(.*)\] rlId \((.*)\))")))
        throw std::runtime_error("recorded replies2: RLBASE line '" + line + "'");
    for (auto value : numbers_in(match[1])) rm.runlist_bases.push_back(u32(value));
    for (auto value : numbers_in(match[2])) rm.runlist_ids.push_back(u32(value));
    for (auto value : numbers_in(first_line(block(rm.blocks2, "ALLOCCH rl0"), "ALLOCCH rl0"))) rm.allocated_rl0_words.push_back(u32(value));
}

}  // namespace

std::vector<std::uint8_t> hex_bytes(const std::string& hex) {
    if (hex.size() % 2) throw std::runtime_error("odd hex string '" + hex + "'");
    std::vector<std::uint8_t> bytes;
    for (std::size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    return bytes;
}

RecordedRm load_recorded_rm(const std::string& directory, const std::string& who) {
    RecordedRm rm;
    std::vector<std::string> preamble;
    rm.blocks = split_blocks(read_lines(directory + "/replies-" + who + ".txt"), preamble);
    read_preamble(preamble, rm);
    std::vector<std::string> preamble2;
    rm.blocks2 = split_blocks(read_lines(directory + "/replies2-" + who + ".txt"), preamble2);
    read_graphics(rm);
    read_engines(rm);
    read_replies2(rm);
    return rm;
}

}  // namespace gpupart::test
