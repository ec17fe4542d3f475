#include "report/csv_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

std::vector<std::string> split_csv_list(std::string_view text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);  // "pid, user" as nvidia-smi allows
        while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
        parts.emplace_back(part);
        if (comma == std::string_view::npos) return parts;
        start = comma + 1;
    }
}

std::string csv_joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
    return out;
}

}  // namespace

std::string csv_field(std::string_view text) {
    const std::string safe = one_line(text);  // no CR or LF left: a field can never end a record
    const bool quote = safe.find_first_of(",\"") != std::string::npos ||
                       (!safe.empty() && (safe.front() == ' ' || safe.back() == ' '));
    if (!quote) return safe;
    std::string out = "\"";
    for (const char c : safe) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csv_record(const std::vector<std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
    return out + "\n";
}

CsvFormat parse_csv_format(std::string_view format) {
    CsvFormat result;
    bool csv = false;
    for (const std::string& word : split_csv_list(format)) {
        if (word == "csv" && !csv)
            csv = true;
        else if (word == "noheader" && result.header)
            result.header = false;
        else
            throw UserError(fmt::format("--format {}: expected csv or csv,noheader", one_line(format)));
    }
    if (!csv) throw UserError(fmt::format("--format {}: expected csv or csv,noheader", one_line(format)));
    return result;
}

std::vector<std::size_t> select_csv_fields(std::string_view requested, const std::vector<std::string>& known) {
    std::vector<std::size_t> positions;
    for (const std::string& name : split_csv_list(requested)) {
        const auto found = std::find(known.begin(), known.end(), name);
        if (found == known.end())
            throw UserError(fmt::format("{}: known fields are {}",
                                        name.empty() ? std::string("empty field name") : fmt::format("unknown field '{}'", one_line(name)),
                                        csv_joined(known)));
        positions.push_back(static_cast<std::size_t>(found - known.begin()));
    }
    return positions;
}

}  // namespace gpupart
