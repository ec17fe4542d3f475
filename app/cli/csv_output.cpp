#include "csv_output.hpp"

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "report/csv_text.hpp"

namespace gpupart::cli {

void add_csv_options(CLI::App& command, CsvOptions& options, std::vector<std::string> known, const std::string& default_fields,
                     CLI::Option* json_flag) {
    CLI::Option* format = command.add_option("--format", options.format, "csv or csv,noheader: one record per row, for scripts")
                              ->check([](const std::string& value) {
                                  try {
                                      parse_csv_format(value);
                                      return std::string();
                                  } catch (const UserError& error) {
                                      return std::string(error.what());
                                  }
                              });
    if (json_flag != nullptr) format->excludes(json_flag);
    command
        .add_option("--fields", options.fields,
                    fmt::format("Comma-separated fields for --format csv (default {}; known: {})", default_fields, fmt::join(known, ",")))
        ->needs(format)
        ->check([known](const std::string& value) {
            try {
                select_csv_fields(value, known);
                return std::string();
            } catch (const UserError& error) {
                return std::string(error.what());
            }
        });
}

void print_csv_rows(const CsvOptions& options, const std::vector<std::string>& known, const std::string& default_fields,
                    const std::vector<std::vector<std::string>>& rows) {
    const CsvFormat format = parse_csv_format(options.format);
    const auto positions = select_csv_fields(options.fields.empty() ? default_fields : options.fields, known);
    std::vector<std::string> record;
    if (format.header) {
        for (const std::size_t i : positions) record.push_back(known[i]);
        fmt::print("{}", csv_record(record));
    }
    for (const auto& row : rows) {
        record.clear();
        for (const std::size_t i : positions) record.push_back(row.at(i));
        fmt::print("{}", csv_record(record));
    }
}

}  // namespace gpupart::cli
