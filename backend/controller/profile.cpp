// Profiles: reading one strictly (every problem a one-line error with its file and line), writing one,
// and matching a rule to a process. Where each value starts in the text is profile_positions.hpp's.
#include "controller/profile.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "controller/profile_positions.hpp"
#include "model/mask_expression.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "snapshot/json_object_reader.hpp"

namespace gpupart {
namespace {

// Read into nlohmann::json, whose objects are std::maps: ordered_json looks keys up linearly, so an
// object of n keys takes n^2 steps to read (28 s for 150,000 keys). Text order, where an error message
// needs it, comes from the position index.
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // for writing, in this order
using profile_positions::FieldPath;
using profile_positions::PositionIndex;

// A field-level problem; parse_profile adds the file and line.
struct FieldError {
    FieldPath path;
    std::string what;
    bool missing = false;  // the line is that of the enclosing object
    int line = 0;          // when known already
};

std::string describe(const Json& value) { return value.is_number_float() ? "a fractional number" : value.type_name(); }

// How the shared strict reader (snapshot/json_object_reader.hpp) names a profile's fields and reports
// their problems: as FieldErrors, which parse_profile turns into "profile FILE:LINE: field PATH: ...".
struct ProfileReport {
    using Path = FieldPath;
    static Path member(const Path& path, const std::string& key) { return path.member(key); }
    [[noreturn]] static void fail(const Path& path, const std::string& what) { throw FieldError{path, what, false, 0}; }
    // A missing field is reported at the line of the object that lacks it.
    [[noreturn]] static void missing(const Path& path) { throw FieldError{path, "missing", true, 0}; }
    static std::string kind(const Json& value) { return describe(value); }
};

[[noreturn]] void fail(const FieldPath& path, const std::string& what) { ProfileReport::fail(path, what); }

// The shared reader, refusing unknown fields in the order the text has them.
class Reader : public BasicJsonObjectReader<Json, ProfileReport> {
public:
    Reader(const Json& object, FieldPath path, const PositionIndex& index)
        : BasicJsonObjectReader(object, std::move(path)), index_(index) {}

    void finish() const { BasicJsonObjectReader::finish(index_.members_of(path())); }

private:
    const PositionIndex& index_;
};

std::string read_nonempty(Reader& reader, const std::string& key) {
    auto value = reader.get<std::string>(key);
    if (value.empty()) fail(reader.path().member(key), "must not be empty");
    return value;
}

ProfileMatch read_match(Reader& reader) {
    ProfileMatch match;
    if (reader.has("exe")) {
        match.exe = read_nonempty(reader, "exe");
        if (match.exe->find('/') != std::string::npos)
            fail(reader.path().member("exe"), fmt::format("'{}' is a path; give the executable's base name", *match.exe));
    }
    if (reader.has("cmdline")) match.cmdline = read_nonempty(reader, "cmdline");
    if (reader.has("user")) match.user = read_nonempty(reader, "user");
    if (reader.has("pid")) {
        match.pid = reader.get<int>("pid");
        if (*match.pid <= 0) fail(reader.path().member("pid"), fmt::format("{} is not a process id (must be at least 1)", *match.pid));
    }
    reader.finish();
    if (!match.exe && !match.cmdline && !match.user && !match.pid)
        fail(reader.path(), "needs at least one of exe, cmdline, user, pid");
    return match;
}

// A version 1 rule's expression, whose numbers and hex masks were launch-descriptor bits, with those terms as one
// "bits:0x..." term (GPC names, counts, shares and "all" mean what they meant).
std::string bits_expression(const std::string& text) {
    const MaskExpression expression = parse_mask_expression(text);
    const auto* terms = std::get_if<std::vector<MaskTerm>>(&expression.value);
    if (terms == nullptr) return text;
    TpcMask bits;
    std::vector<std::string> kept;
    for (const MaskTerm& term : *terms) {
        if (const auto* range = std::get_if<BitRange>(&term)) bits |= TpcMask::range(range->first, range->last);
        else if (const auto* hex = std::get_if<HexBits>(&term)) bits |= hex->mask;
        else if (const auto* old = std::get_if<DescriptorBits>(&term)) bits |= old->bits;
        else if (const auto* gpcs = std::get_if<GpcRange>(&term))
            kept.push_back(gpcs->first == gpcs->last ? fmt::format("gpc{}", gpcs->first) : fmt::format("gpc{}-{}", gpcs->first, gpcs->last));
    }
    if (bits.empty()) return text;
    kept.push_back("bits:" + bits.to_hex());
    return fmt::format("{}", fmt::join(kept, ","));
}

ProfileRule read_rule(const Json& json, const FieldPath& path, const PositionIndex& index, bool bits) {
    Reader reader(json, path, index);
    ProfileRule rule;
    {
        Reader match(reader.child("match"), path.member("match"), index);
        rule.match = read_match(match);
    }
    if (auto gpu = reader.get_if_present<int>("gpu")) {
        if (*gpu < 0) fail(path.member("gpu"), fmt::format("{} must not be negative", *gpu));
        rule.gpu = *gpu;
    }
    rule.tpcs = reader.get<std::string>("tpcs");
    try {
        parse_mask_expression(rule.tpcs);
        if (bits) rule.tpcs = bits_expression(rule.tpcs);
    } catch (const UserError& error) {
        fail(path.member("tpcs"), error.what());
    }
    reader.finish();
    return rule;
}

struct ReadProfile {
    Profile profile;
    std::vector<FieldPath> rule_paths;
};

ReadProfile read_profile(const Json& document, const PositionIndex& index) {
    const FieldPath root;
    Reader top(document, root, index);
    const auto format = top.get<std::string>("format");
    if (format != kProfileFormatName)
        fail(root.member("format"), fmt::format("is '{}', expected '{}'", format, kProfileFormatName));
    const auto version = top.get<int>("version");
    if (version != kProfileFormatVersion && version != kProfileBitsFormatVersion)
        fail(root.member("version"), fmt::format("{} is not supported (this gpupart reads version {}{})", version,
                                                 kProfileFormatVersion,
                                                 version > kProfileFormatVersion ? "; upgrade gpupart" : ""));
    ReadProfile out;
    out.profile.name = top.get<std::string>("name");
    if (!valid_profile_name(out.profile.name))
        fail(root.member("name"),
             fmt::format("'{}' is not a profile name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.')",
                         out.profile.name));
    out.profile.description = top.get<std::string>("description");
    const Json& rules = top.array("rules");
    const FieldPath rules_path = root.member("rules");
    for (std::size_t i = 0; i < rules.size(); ++i) {
        out.rule_paths.push_back(rules_path.item(i));
        out.profile.rules.push_back(read_rule(rules[i], out.rule_paths.back(), index, version == kProfileBitsFormatVersion));
    }
    top.finish();
    return out;
}

// The line of the first number that does not fit a double (nlohmann refuses it: out_of_range.406),
// else 1. Strings are skipped; everything before that number is valid JSON.
int first_overflowing_number_line(std::string_view text) {
    int line = 1;
    for (std::size_t at = 0; at < text.size();) {
        const char c = text[at];
        if (c == '\n') {
            ++line;
            ++at;
        } else if (c == '"') {
            for (++at; at < text.size() && text[at] != '"'; at += text[at] == '\\' ? 2 : 1) {
            }
            ++at;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t start = at;
            while (at < text.size() && std::string_view("+-.eE0123456789").find(text[at]) != std::string_view::npos) ++at;
            const std::string number(text.substr(start, at - start));
            if (!std::isfinite(std::strtod(number.c_str(), nullptr))) return line;
        } else {
            ++at;
        }
    }
    return 1;
}

}  // namespace

bool valid_profile_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name.front() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '-';
    });
}

Profile parse_profile(std::string_view text, const std::string& file) {
    Json document;
    try {
        document = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& error) {
        // A syntax error is a parse_error, whose message starts "[json.exception.parse_error.101] parse error
        // at line 3, column 5: ..." and whose line counts the newlines up to and including the byte it
        // stopped at (error.byte, 1-based). A number too large for a double is an out_of_range error
        // with no position: the first such number in the text (all valid JSON before it) is the one.
        int line = 1;
        if (const auto* parse_error = dynamic_cast<const Json::parse_error*>(&error)) {
            const std::size_t end = std::min<std::size_t>(parse_error->byte, text.size());
            line += static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
        } else {
            line = first_overflowing_number_line(text);
        }
        std::string what = error.what();
        if (auto at = what.find("] "); what.starts_with("[json.exception.") && at != std::string::npos)
            what = what.substr(at + 2);
        throw UserError(one_line(fmt::format("profile {}:{}: not valid JSON: {}", file, line, what)));
    }
    const PositionIndex index(text);
    try {
        if (const auto& duplicate = index.duplicate())
            throw FieldError{duplicate->first, "is given more than once", false, duplicate->second};
        ReadProfile read = read_profile(document, index);
        for (std::size_t i = 0; i < read.profile.rules.size(); ++i)
            read.profile.rules[i].line = index.line_of(read.rule_paths[i], false);
        return std::move(read.profile);
    } catch (const FieldError& error) {
        const int line = error.line ? error.line : index.line_of(error.path, error.missing);
        if (error.path.shown.empty())  // the document itself
            throw UserError(one_line(fmt::format("profile {}:{}: {}", file, line, error.what)));
        throw UserError(one_line(fmt::format("profile {}:{}: field {}: {}", file, line, error.path.shown, error.what)));
    }
}

std::string profile_text(const Profile& profile) {
    OrderedJson rules = OrderedJson::array();
    for (const ProfileRule& rule : profile.rules) {
        OrderedJson match = OrderedJson::object();
        if (rule.match.exe) match["exe"] = *rule.match.exe;
        if (rule.match.cmdline) match["cmdline"] = *rule.match.cmdline;
        if (rule.match.user) match["user"] = *rule.match.user;
        if (rule.match.pid) match["pid"] = *rule.match.pid;
        OrderedJson item = OrderedJson::object();
        item["match"] = std::move(match);
        item["gpu"] = rule.gpu;
        item["tpcs"] = rule.tpcs;
        rules.push_back(std::move(item));
    }
    OrderedJson document = OrderedJson::object();
    document["format"] = kProfileFormatName;
    document["version"] = kProfileFormatVersion;
    document["name"] = profile.name;
    document["description"] = profile.description;
    document["rules"] = std::move(rules);
    try {
        // Profile names and command-line patterns are anybody's text: a file read back means the same, and
        // one shown (save --dry-run, cat) neither drives nor reorders the terminal.
        return escape_hidden_in_json(document.dump(2)) + "\n";
    } catch (const OrderedJson::type_error& error) {  // a string that is not UTF-8
        std::string what = error.what();
        if (auto at = what.find("] "); what.starts_with("[json.exception.") && at != std::string::npos)
            what = what.substr(at + 2);
        throw UserError(one_line(fmt::format("profile '{}': cannot be written as JSON: {}", profile.name, what)));
    }
}

bool rule_matches(const ProfileRule& rule, const ProcessFacts& process) {
    const ProfileMatch& match = rule.match;
    if (!match.exe && !match.cmdline && !match.user && !match.pid) return false;  // a rule must name something
    if (match.pid && *match.pid != process.pid) return false;
    if (match.exe && *match.exe != process.exe) return false;
    if (match.cmdline && ::fnmatch(match.cmdline->c_str(), process.cmdline.c_str(), 0) != 0) return false;
    if (match.user && *match.user != std::to_string(process.uid)) {
        const auto name = passwd_name(process.uid);
        if (!name || *name != *match.user) return false;
    }
    return true;
}

}  // namespace gpupart
