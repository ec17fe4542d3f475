// The journal's line format (journal.hpp): entries, intents and abort lines, and where the file is.
#include "controller/journal.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/xdg_directories.hpp"
#include "snapshot/json_object_reader.hpp"

namespace gpupart {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson journal_change_json(const JournalChange& c) {
    OrderedJson out{{"pid", c.pid},
                {"gpu", c.gpu},
                {"start_time", c.start_time},
                {"command", c.command},
                {"before", c.before_partitioned ? OrderedJson(c.before.to_hex_padded()) : OrderedJson(nullptr)},
                {"after", c.after_partitioned ? OrderedJson(c.after.to_hex_padded()) : OrderedJson(nullptr)},
                {"before_tpcs", c.before_partitioned ? mask_text(c.before, c.numbered) : "all"},
                {"after_tpcs", c.after_partitioned ? mask_text(c.after, c.numbered) : "all"},
                {"generation_after", c.generation_after}};
    // An entry in descriptor bits (before TPC numbers) is still written as it was read: it has no "numbering".
    if (c.numbered) {
        out["numbering"] = "tpc";
        if (c.before_bits) out["before_bits"] = c.before_bits->to_hex_padded();
        if (c.after_bits) out["after_bits"] = c.after_bits->to_hex_padded();
    }
    return out;
}

void read_journal_mask(JsonObjectReader& r, const std::string& key, bool& partitioned, TpcMask& mask) {
    const auto hex = r.get_nullable<std::string>(key);
    partitioned = hex.has_value();
    if (!hex) return;
    const auto parsed = TpcMask::parse_hex(*hex);
    if (!parsed) JsonObjectReader::fail(r.field_path(key), "not a hex mask");
    mask = *parsed;
}

JournalId journal_id(JsonObjectReader& r, const std::string& key) {
    const auto id = r.get<JournalId>(key);  // refuses what does not fit 64 bits, never wraps
    if (id < 1) JsonObjectReader::fail(r.field_path(key), fmt::format("{} is not an id (ids start at 1)", id));
    return id;
}

JournalEntry entry_from_json(const OrderedJson& json) {
    JsonObjectReader r(json, "");
    JournalEntry entry;
    entry.id = journal_id(r, "id");
    entry.time = r.get<std::string>("time");
    entry.uid = r.get<unsigned>("uid");
    entry.user = r.get<std::string>("user");
    entry.action = r.get<std::string>("action");
    if (!r.child("undoes").is_null()) entry.undoes = journal_id(r, "undoes");
    const OrderedJson& changes = r.array("changes");
    for (std::size_t i = 0; i < changes.size(); ++i) {
        JsonObjectReader c(changes[i], fmt::format("changes[{}]", i));
        JournalChange change;
        change.pid = c.get<int>("pid");
        if (changes[i].contains("gpu")) change.gpu = c.get<std::string>("gpu");  // entries before layout 4 have none
        change.start_time = c.get<std::uint64_t>("start_time");
        change.command = c.get<std::string>("command");
        read_journal_mask(c, "before", change.before_partitioned, change.before);
        read_journal_mask(c, "after", change.after_partitioned, change.after);
        c.get<std::string>("before_tpcs");  // for people reading the file; the hex form is the truth
        c.get<std::string>("after_tpcs");
        change.generation_after = c.get<std::uint64_t>("generation_after");
        // "numbering": "tpc" since gpupart used TPC numbers; before that, the masks were descriptor bits.
        const std::optional<std::string> numbering = c.get_if_present<std::string>("numbering");
        if (numbering && *numbering != "tpc") JsonObjectReader::fail(c.field_path("numbering"), "not \"tpc\"");
        change.numbered = numbering.has_value();
        if (change.numbered) {
            for (const auto& [key, bits] : {std::pair{"before_bits", &change.before_bits}, std::pair{"after_bits", &change.after_bits}})
                if (changes[i].contains(key)) {
                    TpcMask mask;
                    bool partitioned = false;
                    read_journal_mask(c, key, partitioned, mask);
                    if (partitioned) *bits = mask;
                }
        } else {
            change.before_bits = change.before;
            change.after_bits = change.after;
        }
        c.finish();
        entry.changes.push_back(std::move(change));
    }
    if (json.contains("rules")) {  // entries written before rules were journaled have none
        JsonObjectReader rules(r.child("rules"), "rules");
        entry.rules = RulesChange{rules_from_json(rules.child("before"), "rules.before"),
                                  rules_from_json(rules.child("after"), "rules.after")};
        rules.finish();
    }
    entry.recovered = r.get_if_present<std::string>("recovered");
    if (json.contains("walk")) {  // entries of gpupart measure's walks (their own layout)
        JsonObjectReader walk(r.child("walk"), "walk");
        entry.walk = JournalWalk{walk.get<int>("writer_pid"), walk.get<std::uint64_t>("writes")};
        walk.finish();
    }
    r.finish();
    return entry;
}

}  // namespace

OrderedJson journal_entry_json(const JournalEntry& entry) {
    OrderedJson changes = OrderedJson::array();
    for (const auto& change : entry.changes) changes.push_back(journal_change_json(change));
    OrderedJson out{{"id", entry.id},       {"time", entry.time},     {"uid", entry.uid},
                    {"user", entry.user},   {"action", entry.action}, {"undoes", entry.undoes ? OrderedJson(*entry.undoes) : OrderedJson(nullptr)},
                    {"changes", changes}};
    if (entry.rules) out["rules"] = OrderedJson{{"before", rules_json(entry.rules->before)}, {"after", rules_json(entry.rules->after)}};
    if (entry.recovered) out["recovered"] = *entry.recovered;
    if (entry.walk) out["walk"] = OrderedJson{{"writer_pid", entry.walk->writer_pid}, {"writes", entry.walk->writes}};
    return out;
}

std::string journal_entry_line(const JournalEntry& entry) { return journal_entry_json(entry).dump() + "\n"; }

std::string journal_intent_line(const JournalIntent& intent) {
    return OrderedJson{{"intent", journal_entry_json(intent.entry)},
                       {"before_generations", intent.before_generations},
                       {"registry", intent.registry}}
               .dump() +
           "\n";
}

std::string journal_abort_line(JournalId id, const std::string& why) {
    return OrderedJson{{"aborted", id}, {"why", one_line(why)}}.dump() + "\n";
}

JournalLine parse_journal_line(const std::string& text) {
    try {
        const OrderedJson json = OrderedJson::parse(text);
        if (!json.is_object()) throw UserError("not a JSON object");
        JournalLine line;
        if (json.contains("intent")) {
            JsonObjectReader r(json, "");
            line.kind = JournalLine::Kind::intent;
            line.intent.entry = entry_from_json(r.child("intent"));
            line.intent.before_generations = r.child("before_generations").get<std::vector<std::uint64_t>>();
            line.intent.registry = r.get<std::string>("registry");
            r.finish();
            if (line.intent.before_generations.size() != line.intent.entry.changes.size())
                throw UserError("field before_generations: one per change expected");
            line.id = line.intent.entry.id;
        } else if (json.contains("aborted")) {
            JsonObjectReader r(json, "");
            line.kind = JournalLine::Kind::aborted;
            line.id = journal_id(r, "aborted");
            line.why = r.get<std::string>("why");
            r.finish();
        } else {
            line.entry = entry_from_json(json);
            line.id = line.entry.id;
        }
        return line;
    } catch (const nlohmann::json::exception& error) {
        throw UserError(fmt::format("not valid JSON: {}", error.what()));
    } catch (const SnapshotFormatError& error) {
        throw UserError(fmt::format("field {}", error.what()));
    }
}

std::string Journal::default_path() {
    if (const char* chosen = std::getenv("GPUPART_JOURNAL"); chosen != nullptr && chosen[0] != '\0') return chosen;
    const auto state = xdg_base_directory(XdgBase::state);
    if (!state) throw UserError("cannot find the history: HOME is not set (set GPUPART_JOURNAL)");
    return *state + "/gpupart/history.jsonl";
}

}  // namespace gpupart
