#pragma once
// Strict, path-aware reading of one JSON object: every field is required and typed, and fields the
// format does not know are refused, so a typo in a hand-edited snapshot is an error, not a default.
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "snapshot/snapshot_json.hpp"

namespace gpupart {

class JsonObjectReader {
public:
    using Json = nlohmann::ordered_json;

    JsonObjectReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
        if (!object_.is_object()) fail(path_, "expected an object, got " + std::string(object_.type_name()));
    }

    const std::string& path() const { return path_; }
    std::string field_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

    const Json& child(const std::string& key) {
        auto it = object_.find(key);
        if (it == object_.end()) fail(field_path(key), "missing");
        used_.insert(key);
        return *it;
    }

    const Json& array(const std::string& key) {
        const Json& value = child(key);
        if (!value.is_array()) fail(field_path(key), "expected an array, got " + std::string(value.type_name()));
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
        if (!object_.contains(key)) return std::nullopt;
        return get<T>(key);
    }

    // Refuses fields that were never read.
    void finish() const {
        for (auto it = object_.begin(); it != object_.end(); ++it)
            if (!used_.count(it.key())) fail(field_path(it.key()), "is not a field of this format version");
    }

    template <typename T>
    static T convert(const Json& value, const std::string& path) {
        if constexpr (std::is_same_v<T, bool>) {
            if (!value.is_boolean()) fail(path, "expected true or false, got " + std::string(value.type_name()));
            return value.get<bool>();
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!value.is_string()) fail(path, "expected a string, got " + std::string(value.type_name()));
            return value.get<std::string>();
        } else if constexpr (std::is_integral_v<T>) {
            if (!value.is_number_integer()) fail(path, "expected an integer, got " + describe(value));
            if (value.is_number_unsigned()) {
                const auto number = value.get<std::uint64_t>();
                if (number > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
                    fail(path, fmt::format("{} is too large", number));
                return static_cast<T>(number);
            }
            const auto number = value.get<std::int64_t>();
            if (std::is_unsigned_v<T> && number < 0) fail(path, fmt::format("{} must not be negative", number));
            if (!std::is_unsigned_v<T> && (number < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                                           number > static_cast<std::int64_t>(std::numeric_limits<T>::max())))
                fail(path, fmt::format("{} is out of range", number));
            return static_cast<T>(number);
        } else {
            static_assert(sizeof(T) == 0, "unsupported field type");
        }
    }

    [[noreturn]] static void fail(const std::string& path, const std::string& what) {
        throw SnapshotFormatError(path + ": " + what);
    }

private:
    static std::string describe(const Json& value) {
        if (value.is_number_float()) return "a fractional number";
        return value.type_name();
    }

    const Json& object_;
    std::string path_;
    std::set<std::string> used_;
};

}  // namespace gpupart
