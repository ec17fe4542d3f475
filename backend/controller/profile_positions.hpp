#pragma once
// Where the values of a profile's JSON text start (line numbers for its error messages) and in which
// order its members appear: what nlohmann's parsed document no longer knows. Used by profile.cpp only.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpupart::profile_positions {

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
            return nlohmann::json::parse(token).get<std::string>();  // the very decoding nlohmann gave the key
        } catch (const nlohmann::json::exception&) {
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

}  // namespace gpupart::profile_positions
