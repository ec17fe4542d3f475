#pragma once
// `--format csv[,noheader] [--fields a,b,c]` for the read commands that print tables (list, gpus, check),
// the way `nvidia-smi --query-gpu=... --format=csv,noheader` works: one record per row, fields in the
// order named. A command describes its columns once; names, validation and printing come from here.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gpupart::cli {

template <typename Row>
struct CsvColumn {
    std::string name;
    std::function<std::string(const Row&)> value;  // "" where the value is not known (JSON null)
};

struct CsvOptions {
    std::string format;  // empty: the command's usual output
    std::string fields;  // empty: the command's default fields
    bool wanted() const { return !format.empty(); }
};

// Adds --format and --fields (which needs --format and excludes `json_flag`). Both are checked while the
// command line is parsed, so a bad format or an unknown field is a usage error (exit 2) naming the known
// fields, before anything is read.
void add_csv_options(CLI::App& command, CsvOptions& options, std::vector<std::string> known, const std::string& default_fields,
                     CLI::Option* json_flag);

// Prints the header (unless noheader) and one record per row: RFC 4180, escaped (report/csv_text.hpp).
void print_csv_rows(const CsvOptions& options, const std::vector<std::string>& known, const std::string& default_fields,
                    const std::vector<std::vector<std::string>>& rows);

template <typename Row>
std::vector<std::string> csv_names(const std::vector<CsvColumn<Row>>& columns) {
    std::vector<std::string> names;
    for (const auto& column : columns) names.push_back(column.name);
    return names;
}

template <typename Row>
void print_csv(const CsvOptions& options, const std::vector<CsvColumn<Row>>& columns, const std::string& default_fields,
               const std::vector<Row>& rows) {
    std::vector<std::vector<std::string>> table;
    for (const Row& row : rows) {
        std::vector<std::string>& cells = table.emplace_back();
        for (const auto& column : columns) cells.push_back(column.value(row));
    }
    print_csv_rows(options, csv_names(columns), default_fields, table);
}

}  // namespace gpupart::cli
