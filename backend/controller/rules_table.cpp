#include "controller/rules_table.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"  // mask_from_words, mask_to_words
#include "snapshot/json_object_reader.hpp"

namespace gpupart {
namespace {

using OrderedJson = nlohmann::ordered_json;

// The calling user's table lives in their own registry directory, where nobody else can put a file.
std::optional<std::string> own_directory(const std::string& registry_dir, bool create) {
    return user_directory(registry_dir, ::getuid(), create);
}

std::string rules_path(const std::string& user_dir) { return fmt::format("{}/{}", user_dir, GPUPART_RULES_FILE); }

// A fixed-size field's text up to its NUL (a field without one is malformed and never matched).
// Made valid UTF-8: a table is bytes another process wrote, and its text goes into JSON (journal, --json).
std::string field_text(const char* field, std::size_t size) { return valid_utf8(std::string_view(field, ::strnlen(field, size))); }

constexpr std::uint32_t kKnownMatches = GPUPART_RULE_MATCH_EXE | GPUPART_RULE_MATCH_CMDLINE | GPUPART_RULE_MATCH_UID;

// A string into a fixed-size, NUL-terminated field: one that does not fit is refused, never cut short.
void copy_field(JsonObjectReader& r, const std::string& key, char* field, std::size_t size) {
    const std::string text = r.get<std::string>(key);
    if (text.size() >= size || text.find('\0') != std::string::npos)
        JsonObjectReader::fail(r.field_path(key), fmt::format("longer than {} bytes or holds a NUL", size - 1));
    std::memset(field, 0, size);
    std::memcpy(field, text.data(), text.size());
}

TpcMask mask_field(JsonObjectReader& r, const std::string& key) {
    const auto mask = TpcMask::parse_hex(r.get<std::string>(key));
    if (!mask) JsonObjectReader::fail(r.field_path(key), "not a hex mask");
    return *mask;
}

}  // namespace

ArmedRules read_armed_rules(const std::string& registry_dir) {
    const auto dir = own_directory(registry_dir, false);
    if (!dir) return std::nullopt;
    gpupart_rules_file rules{};
    const int error = gpupart_rules_read(dir->c_str(), static_cast<std::uint32_t>(::getuid()), &rules);
    if (error == -ENOENT) return std::nullopt;
    // Nothing is changed over a table that cannot be read back: undo could not restore it. The shim ignores
    // such a file too, so removing it by hand loses nothing.
    const std::string path = one_line(rules_path(*dir));
    if (error == -EPROTO)
        throw UserError(fmt::format("{}: not a rules table of this gpupart (another layout); nothing changed: remove it "
                                    "(`rm {}`) to arm or disarm rules", path, path));
    if (error == -EINVAL)
        throw UserError(fmt::format("{}: not a regular file; nothing changed: remove it (`rm {}`) to arm or disarm rules",
                                    path, path));
    if (error != 0)
        throw UserError(fmt::format("{}: cannot read: {} (a table must be yours and of this layout's size); nothing changed: "
                                    "remove it (`rm {}`) to arm or disarm rules", path, std::strerror(-error), path));
    return rules;
}

void write_armed_rules(const std::string& registry_dir, const ArmedRules& rules) {
    if (!rules) {
        const auto dir = own_directory(registry_dir, false);
        if (!dir) return;
        std::error_code error;
        std::filesystem::remove(rules_path(*dir), error);
        if (error) throw UserError(fmt::format("{}: cannot remove: {}", one_line(rules_path(*dir)), error.message()));
        return;
    }
    const std::string dir = *own_directory(registry_dir, true);
    if (const int error = gpupart_rules_write(dir.c_str(), &*rules); error != 0)
        throw UserError(fmt::format("cannot write {}: {}", one_line(rules_path(dir)),
                                    error == -EINVAL ? "not a regular file" : std::strerror(-error)));
}

bool same_rules(const ArmedRules& a, const ArmedRules& b) {
    if (!a || !b) return a.has_value() == b.has_value();
    if (a->count != b->count || std::strncmp(a->profile, b->profile, sizeof a->profile) != 0) return false;
    for (std::uint32_t i = 0; i < a->count && i < GPUPART_RULES_MAX; ++i)
        if (std::memcmp(&a->rules[i], &b->rules[i], sizeof a->rules[i]) != 0) return false;
    return true;
}

std::string rules_change_text(const RulesChange& change, std::string_view arrow) {
    return fmt::format("rules for processes that start later: {} {} {}", rules_summary(change.before), arrow, rules_summary(change.after));
}

std::string rules_summary(const ArmedRules& rules) {
    if (!rules) return "no rules";
    return fmt::format("profile {} ({} rule{})", field_text(rules->profile, sizeof rules->profile), rules->count,
                       rules->count == 1 ? "" : "s");
}

OrderedJson rules_json(const ArmedRules& rules) {
    if (!rules) return nullptr;
    OrderedJson list = OrderedJson::array();
    for (std::uint32_t i = 0; i < rules->count && i < GPUPART_RULES_MAX; ++i) {
        const gpupart_rule& rule = rules->rules[i];
        list.push_back(OrderedJson{{"match", rule.match},
                                   {"uid", rule.uid},
                                   {"gpu", uuid_text(rule.gpu)},
                                   {"line", rule.line},
                                   {"allowed", mask_from_words(rule.allowed).to_hex()},
                                   {"real_tpcs", mask_from_words(rule.real_tpcs).to_hex()},
                                   {"exe", field_text(rule.exe, sizeof rule.exe)},
                                   {"cmdline", field_text(rule.cmdline, sizeof rule.cmdline)}});
    }
    return OrderedJson{{"profile", field_text(rules->profile, sizeof rules->profile)},
                       {"owner_uid", rules->owner_uid},
                       {"written_realtime_ns", rules->written_realtime_ns},
                       {"rules", std::move(list)}};
}

ArmedRules rules_from_json(const OrderedJson& json, const std::string& path) {
    if (json.is_null()) return std::nullopt;
    JsonObjectReader r(json, path);
    gpupart_rules_file rules{};
    std::memcpy(rules.magic, GPUPART_RULES_MAGIC, sizeof rules.magic);
    rules.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    rules.file_size = sizeof rules;
    copy_field(r, "profile", rules.profile, sizeof rules.profile);
    rules.owner_uid = r.get<std::uint32_t>("owner_uid");
    rules.written_realtime_ns = r.get<std::uint64_t>("written_realtime_ns");
    const OrderedJson& list = r.array("rules");
    if (list.size() > GPUPART_RULES_MAX) JsonObjectReader::fail(r.field_path("rules"), fmt::format("more than {} rules", GPUPART_RULES_MAX));
    for (std::size_t i = 0; i < list.size(); ++i) {
        JsonObjectReader item(list[i], fmt::format("{}[{}]", r.field_path("rules"), i));
        gpupart_rule& rule = rules.rules[rules.count++];
        rule.match = item.get<std::uint32_t>("match");
        if (rule.match == 0 || (rule.match & ~kKnownMatches) != 0)
            JsonObjectReader::fail(item.field_path("match"), fmt::format("{} is not a set of EXE (1), CMDLINE (2) and UID (4)", rule.match));
        rule.uid = item.get<std::uint32_t>("uid");
        try {
            rule.gpu = uuid_words(item.get<std::string>("gpu"));
        } catch (const UserError& error) {
            JsonObjectReader::fail(item.field_path("gpu"), error.what());
        }
        rule.line = item.get<std::uint32_t>("line");
        mask_to_words(mask_field(item, "allowed"), rule.allowed);
        mask_to_words(mask_field(item, "real_tpcs"), rule.real_tpcs);
        copy_field(item, "exe", rule.exe, sizeof rule.exe);
        copy_field(item, "cmdline", rule.cmdline, sizeof rule.cmdline);
        item.finish();
    }
    r.finish();
    return rules;
}

}  // namespace gpupart
