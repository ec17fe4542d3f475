#pragma once
// Strict, path-aware reading of one JSON object: every field is required and typed, and fields the
// format does not know are refused, so a typo in a hand-edited snapshot, journal or profile is an error,
// not a default. The one strict reader of the project's JSON formats; a format chooses how a field's
// path is spelled and how a problem is thrown (its Report), the reading rules are the same for all.
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "snapshot/snapshot_json.hpp"

namespace gpupart {

// The snapshot's and the journal's report: dotted paths ("gpus[0].name"), SnapshotFormatError.
struct DottedPathReport {
    using Path = std::string;
    static Path member(const Path& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
    [[noreturn]] static void fail(const Path& path, const std::string& what) { throw SnapshotFormatError(path + ": " + what); }
    // A required field that is absent (`path` is the field's).
    [[noreturn]] static void missing(const Path& path) { fail(path, "missing"); }
    // What a value of the wrong kind is called, where any value may appear.
    template <typename Json>
    static std::string kind(const Json& value) { return value.type_name(); }
};

// Report: Path, member(path, key), fail(path, what), missing(path), kind(value) as DottedPathReport.
template <typename Json, typename Report>
class BasicJsonObjectReader {
public:
    using Path = typename Report::Path;

    BasicJsonObjectReader(const Json& object, Path path) : object_(object), path_(std::move(path)) {
        if (!object_.is_object()) fail(path_, "expected an object, got " + Report::kind(object_));
    }

    const Path& path() const { return path_; }
    Path field_path(const std::string& key) const { return Report::member(path_, key); }
    bool has(const std::string& key) const { return object_.contains(key); }

    const Json& child(const std::string& key) {
        auto it = object_.find(key);
        if (it == object_.end()) Report::missing(field_path(key));
        used_.insert(key);
        return *it;
    }

    const Json& array(const std::string& key) {
        const Json& value = child(key);
        if (!value.is_array()) fail(field_path(key), "expected an array, got " + Report::kind(value));
        return value;
    }

    template <typename T>
    T get(const std::string& key) {
        return convert<T>(child(key), field_path(key));
    }

    template <typename T>
    std::optional<T> get_nullable(const std::string& key) {
        const Json& value = child(key);
        if (value.is_null()) return std::nullopt;
        return convert<T>(value, field_path(key));
    }

    template <typename T>
    std::optional<T> get_if_present(const std::string& key) {
        if (!has(key)) return std::nullopt;
        return get<T>(key);
    }

    // Refuses fields that were never read: first those of `text_order` (the object's member names as the
    // text has them, when the format knows it: the first unknown field in the file is the one named).
    void finish(const std::vector<std::string>* text_order = nullptr) const {
        if (text_order != nullptr)
            for (const std::string& name : *text_order)
                if (!used_.count(name)) fail(field_path(name), "is not a field of this format version");
        for (auto it = object_.begin(); it != object_.end(); ++it)
            if (!used_.count(it.key())) fail(field_path(it.key()), "is not a field of this format version");
    }

    template <typename T>
    static T convert(const Json& value, const Path& path) {
        if constexpr (std::is_same_v<T, bool>) {
            if (!value.is_boolean()) fail(path, "expected true or false, got " + Report::kind(value));
            return value.template get<bool>();
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!value.is_string()) fail(path, "expected a string, got " + Report::kind(value));
            return value.template get<std::string>();
        } else if constexpr (std::is_integral_v<T>) {
            if (!value.is_number_integer()) fail(path, "expected an integer, got " + describe(value));
            if (value.is_number_unsigned()) {
                const auto number = value.template get<std::uint64_t>();
                if (number > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
                    fail(path, fmt::format("{} is too large", number));
                return static_cast<T>(number);
            }
            const auto number = value.template get<std::int64_t>();
            if (std::is_unsigned_v<T> && number < 0) fail(path, fmt::format("{} must not be negative", number));
            if (!std::is_unsigned_v<T> && (number < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                                           number > static_cast<std::int64_t>(std::numeric_limits<T>::max())))
                fail(path, fmt::format("{} is out of range", number));
            return static_cast<T>(number);
        } else {
            static_assert(sizeof(T) == 0, "unsupported field type");
        }
    }

    [[noreturn]] static void fail(const Path& path, const std::string& what) { Report::fail(path, what); }

private:
    // Where only an integer fits, a fraction is named as such.
    static std::string describe(const Json& value) {
        if (value.is_number_float()) return "a fractional number";
        return value.type_name();
    }

    const Json& object_;
    Path path_;
    std::set<std::string> used_;
};

using JsonObjectReader = BasicJsonObjectReader<nlohmann::ordered_json, DottedPathReport>;

}  // namespace gpupart
