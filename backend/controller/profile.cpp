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

// A field's place in the document, twice: as the user reads it ("rules[2].match.exe") and as keys of
// the position index, its own last and every enclosing value's before it (a key may itself hold '.'
// or '[', so the index keys spell each step unambiguously).
struct FieldPath {
    std::string shown;
    std::vector<std::string> keys{""};  // keys.front() is the root

    FieldPath member(std::string_view name) const {
        FieldPath out{shown.empty() ? std::string(name) : fmt::format("{}.{}", shown, name), keys};
        out.keys.push_back(fmt::format("{}k{}:{}", keys.back(), name.size(), name));
        return out;
    }
    FieldPath item(std::size_t index) const {
        FieldPath out{fmt::format("{}[{}]", shown, index), keys};
        out.keys.push_back(fmt::format("{}i{};", keys.back(), index));
        return out;
    }
};

// Where values start, found by a tokenizer pass over text that nlohmann already accepted. It indexes
// what the profile format can complain about: the root, its members, the items of "rules", their
// members and the members of their "match". Deeper values are skipped, so the index stays linear in
// the text however long the keys, and nothing here recurses, however deep the nesting.
class PositionIndex {
public:
    explicit PositionIndex(std::string_view text) : text_(text) { scan(); }

    // The 1-based line where the value at `path` starts (or, with `enclosing`, the value holding it);
    // the nearest indexed ancestor's line when that value is not indexed.
    int line_of(const FieldPath& path, bool enclosing) const {
        auto last = path.keys.rend();
        auto it = path.keys.rbegin();
        if (enclosing && path.keys.size() > 1) ++it;
        for (; it != last; ++it)
            if (auto found = lines_.find(*it); found != lines_.end()) return found->second;
        return 1;
    }
    // The first member (in text order) whose object already had one of that name: its path and line.
    const std::optional<std::pair<FieldPath, int>>& duplicate() const { return duplicate_; }
    // The member names of the object at `path` in text order, when its members are indexed.
    const std::vector<std::string>* members_of(const FieldPath& path) const {
        auto found = members_.find(path.keys.back());
        return found == members_.end() ? nullptr : &found->second;
    }

private:
    // What a value is to the profile format; it decides whether the value's children are indexed.
    enum class Level { root, top_member, rules, rule, rule_member, match, match_member, skipped };

    static Level child_level(Level parent, std::string_view name) {
        switch (parent) {
        case Level::root: return name == "rules" ? Level::rules : Level::top_member;
        case Level::rules: return Level::rule;
        case Level::rule: return name == "match" ? Level::match : Level::rule_member;
        case Level::match: return Level::match_member;
        default: return Level::skipped;
        }
    }

    struct Frame {
        bool object = false;
        Level level = Level::skipped;
        FieldPath path;
        std::size_t items = 0;
        std::set<std::string> names;  // members seen so far (indexed objects only)
    };

    void skip_space() {
        while (at_ < text_.size()) {
            const char c = text_[at_];
            if (c == '\n') ++line_;
            else if (c != ' ' && c != '\t' && c != '\r') return;
            ++at_;
        }
    }

    // At an opening quote: the raw token, quotes included; leaves `at_` after the closing quote.
    std::string_view string_token() {
        const std::size_t start = at_++;
        while (at_ < text_.size() && text_[at_] != '"') at_ += text_[at_] == '\\' ? 2 : 1;
        at_ = std::min(at_ + 1, text_.size());
        return text_.substr(start, at_ - start);
    }

    static std::string decode(std::string_view token) {
        if (token.size() < 2) return std::string(token);
        if (token.find('\\') == std::string_view::npos) return std::string(token.substr(1, token.size() - 2));
        try {
            return Json::parse(token).get<std::string>();  // the very decoding nlohmann gave the key
        } catch (const Json::exception&) {
            return std::string(token);
        }
    }

    void scan() {
        if (text_.starts_with("\xEF\xBB\xBF")) at_ = 3;  // nlohmann skips a UTF-8 byte order mark
        std::vector<Frame> stack;
        FieldPath path;  // of the next value
        Level level = Level::root;
        while (true) {
            skip_space();
            if (at_ >= text_.size()) return;
            if (level != Level::skipped) lines_[path.keys.back()] = line_;
            const char c = text_[at_];
            const bool opens = c == '{' || c == '[';
            if (opens) {
                ++at_;
                stack.push_back(Frame{c == '{', level, std::move(path), 0, {}});
            } else if (c == '"') {
                string_token();
            } else {
                while (at_ < text_.size() && std::string_view(",]} \t\r\n").find(text_[at_]) == std::string_view::npos)
                    ++at_;
            }
            // Close what ends here, then find the next value and its path.
            bool first = opens;
            while (true) {
                if (stack.empty()) return;
                skip_space();
                if (at_ >= text_.size()) return;
                if (text_[at_] == '}' || text_[at_] == ']') {
                    ++at_;
                    stack.pop_back();
                    first = false;
                    continue;
                }
                if (!first) {
                    if (text_[at_] != ',') return;  // not JSON after all: stop indexing
                    ++at_;
                    skip_space();
                }
                break;
            }
            // Paths are built for indexed values only: deep nesting must not copy ever longer paths.
            Frame& frame = stack.back();
            if (!frame.object) {
                level = frame.level == Level::rules ? Level::rule : Level::skipped;
                path = level == Level::skipped ? FieldPath{} : frame.path.item(frame.items);
                ++frame.items;
                continue;
            }
            if (at_ >= text_.size() || text_[at_] != '"') return;
            const std::string_view token = string_token();
            skip_space();
            if (at_ >= text_.size() || text_[at_] != ':') return;
            ++at_;
            if (frame.level == Level::skipped) {
                level = Level::skipped;
                path = FieldPath{};
                continue;
            }
            const std::string name = decode(token);
            level = child_level(frame.level, name);
            path = level == Level::skipped ? FieldPath{} : frame.path.member(name);
            if (level == Level::skipped) continue;
            if (frame.names.insert(name).second) {
                members_[frame.path.keys.back()].push_back(name);
            } else if (!duplicate_) {
                skip_space();
                duplicate_ = std::pair{path, line_};
            }
        }
    }

    std::string_view text_;
    std::size_t at_ = 0;
    int line_ = 1;
    std::map<std::string, int> lines_;
    std::map<std::string, std::vector<std::string>> members_;
    std::optional<std::pair<FieldPath, int>> duplicate_;
};

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
