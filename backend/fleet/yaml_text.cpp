#include "fleet/yaml_text.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gpupart {
namespace {

using Json = nlohmann::ordered_json;

std::string key_text(const std::string& key) {
    const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.' || c == '/';
    }) && std::isalpha(static_cast<unsigned char>(key.front()));  // "66" or "-x" would read as a number or a list
    // Words YAML 1.1 readers take for booleans or null: quoted, so a key is always a string.
    static const std::vector<std::string> words = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"};
    std::string lower = key;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return plain && std::find(words.begin(), words.end(), lower) == words.end()
               ? key
               : Json(key).dump(-1, ' ', true, Json::error_handler_t::replace);
}

// A scalar, or an empty container in flow style.
std::string scalar_text(const Json& value) {
    if (value.is_object() && value.empty()) return "{}";
    if (value.is_array() && value.empty()) return "[]";
    return value.dump(-1, ' ', true, Json::error_handler_t::replace);  // strings: quoted, escaped, ASCII only
}

bool nested(const Json& value) { return value.is_structured() && !value.empty(); }

void write(const Json& value, int indent, std::string& out);

void write_entries(const Json& object, int indent, std::string& out, bool first_inline) {
    bool first = true;
    for (const auto& [key, item] : object.items()) {
        if (!(first && first_inline)) out.append(static_cast<std::size_t>(indent), ' ');
        first = false;
        out += key_text(key) + ":";
        if (nested(item)) {
            out += "\n";
            write(item, indent + 2, out);
        } else {
            out += " " + scalar_text(item) + "\n";
        }
    }
}

void write(const Json& value, int indent, std::string& out) {
    if (value.is_object()) return write_entries(value, indent, out, false);
    for (const Json& item : value) {  // an array
        out.append(static_cast<std::size_t>(indent), ' ');
        if (item.is_object() && !item.empty()) {
            out += "- ";
            write_entries(item, indent + 2, out, true);
        } else if (nested(item)) {
            out += "-\n";
            write(item, indent + 2, out);
        } else {
            out += "- " + scalar_text(item) + "\n";
        }
    }
}

}  // namespace

std::string yaml_text(const nlohmann::ordered_json& value) {
    if (!nested(value)) return scalar_text(value) + "\n";
    std::string out;
    write(value, 0, out);
    return out;
}

}  // namespace gpupart
