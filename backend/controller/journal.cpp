#include "controller/journal.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "registry/process_identity.hpp"
#include "snapshot/json_object_reader.hpp"

namespace gpupart {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson change_json(const JournalChange& c) {
    return OrderedJson{{"pid", c.pid},
                {"start_time", c.start_time},
                {"command", c.command},
                {"before", c.before_partitioned ? OrderedJson(c.before.to_hex_padded()) : OrderedJson(nullptr)},
                {"after", c.after_partitioned ? OrderedJson(c.after.to_hex_padded()) : OrderedJson(nullptr)},
                {"before_tpcs", c.before_partitioned ? c.before.to_list() : "all"},
                {"after_tpcs", c.after_partitioned ? c.after.to_list() : "all"},
                {"generation_after", c.generation_after}};
}

void read_mask(JsonObjectReader& r, const std::string& key, bool& partitioned, TpcMask& mask) {
    const auto hex = r.get_nullable<std::string>(key);
    partitioned = hex.has_value();
    if (!hex) return;
    const auto parsed = TpcMask::parse_hex(*hex);
    if (!parsed) JsonObjectReader::fail(r.field_path(key), "not a hex mask");
    mask = *parsed;
}

JournalEntry entry_from_json(const OrderedJson& json) {
    JsonObjectReader r(json, "");
    JournalEntry entry;
    entry.id = r.get<int>("id");
    entry.time = r.get<std::string>("time");
    entry.uid = r.get<unsigned>("uid");
    entry.user = r.get<std::string>("user");
    entry.action = r.get<std::string>("action");
    entry.undoes = r.get_nullable<int>("undoes");
    const OrderedJson& changes = r.array("changes");
    for (std::size_t i = 0; i < changes.size(); ++i) {
        JsonObjectReader c(changes[i], fmt::format("changes[{}]", i));
        JournalChange change;
        change.pid = c.get<int>("pid");
        change.start_time = c.get<std::uint64_t>("start_time");
        change.command = c.get<std::string>("command");
        read_mask(c, "before", change.before_partitioned, change.before);
        read_mask(c, "after", change.after_partitioned, change.after);
        c.get<std::string>("before_tpcs");  // for people reading the file; the hex form is the truth
        c.get<std::string>("after_tpcs");
        change.generation_after = c.get<std::uint64_t>("generation_after");
        c.finish();
        entry.changes.push_back(std::move(change));
    }
    if (json.contains("rules")) {  // entries written before rules were journaled have none
        JsonObjectReader rules(r.child("rules"), "rules");
        entry.rules = RulesChange{rules_from_json(rules.child("before"), "rules.before"),
                                  rules_from_json(rules.child("after"), "rules.after")};
        rules.finish();
    }
    r.finish();
    return entry;
}

std::string now_utc() {
    const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

}  // namespace

OrderedJson journal_entry_json(const JournalEntry& entry) {
    OrderedJson changes = OrderedJson::array();
    for (const auto& change : entry.changes) changes.push_back(change_json(change));
    OrderedJson out{{"id", entry.id},       {"time", entry.time},     {"uid", entry.uid},
                    {"user", entry.user},   {"action", entry.action}, {"undoes", entry.undoes ? OrderedJson(*entry.undoes) : OrderedJson(nullptr)},
                    {"changes", changes}};
    if (entry.rules) out["rules"] = OrderedJson{{"before", rules_json(entry.rules->before)}, {"after", rules_json(entry.rules->after)}};
    return out;
}

Journal::Journal(std::string path) : path_(std::move(path)) {}

std::string Journal::default_path() {
    if (const char* chosen = std::getenv("GPUPART_JOURNAL"); chosen != nullptr && chosen[0] != '\0') return chosen;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/')
        return std::string(state) + "/gpupart/history.jsonl";
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] == '\0') throw UserError("cannot find the history: HOME is not set (set GPUPART_JOURNAL)");
    return std::string(home) + "/.local/state/gpupart/history.jsonl";
}

std::vector<JournalEntry> Journal::read() const {
    std::vector<JournalEntry> entries;
    std::ifstream in(path_);
    if (!in) return entries;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty()) continue;
        try {
            entries.push_back(entry_from_json(OrderedJson::parse(line)));
        } catch (const nlohmann::json::exception& error) {
            throw UserError(fmt::format("history {}:{}: not valid JSON: {}", path_, number, error.what()));
        } catch (const SnapshotFormatError& error) {
            throw UserError(fmt::format("history {}:{}: field {}", path_, number, error.what()));
        }
    }
    return entries;
}

JournalEntry Journal::append(JournalEntry entry) const {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ignored);
    const auto entries = read();
    entry.id = entries.empty() ? 1 : entries.back().id + 1;
    entry.time = now_utc();
    entry.uid = ::getuid();
    entry.user = user_name(entry.uid);
    const std::string line = journal_entry_json(entry).dump() + "\n";
    // One write to an O_APPEND file: the line lands whole at the end, even beside another gpupart.
    const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw UserError(fmt::format("history {}: cannot open: {}", path_, std::strerror(errno)));
    const ssize_t written = ::write(fd, line.data(), line.size());
    const int error = errno;
    ::close(fd);
    if (written != static_cast<ssize_t>(line.size()))
        throw UserError(fmt::format("history {}: write failed: {}", path_, std::strerror(error)));
    return entry;
}

std::optional<JournalEntry> Journal::last_undoable() const {
    const auto entries = read();
    std::set<int> undone;
    for (const auto& entry : entries)
        if (entry.undoes) undone.insert(*entry.undoes);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
        if (!it->undoes && !undone.count(it->id)) return *it;
    return std::nullopt;
}

}  // namespace gpupart
