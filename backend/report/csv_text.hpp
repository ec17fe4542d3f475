#pragma once
// CSV for scripts (`gpupart list|gpus|check --format csv`), as RFC 4180 writes it, made safe for text that
// other processes control: a command line with commas, quotes or newlines stays one field of one row, and
// never adds a row or a column.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

// One field: one_line(text) (model/user_error.hpp: newlines, control bytes and bidi overrides escaped as on
// the terminal, so no record ever spans lines), then quoted ("...", inner quotes doubled) when it holds a
// comma, a double quote or a leading or trailing space. Everything else is written as it is.
std::string csv_field(std::string_view text);

// The fields as one record: csv_field of each, joined by commas, ended by "\n" (LF, as nvidia-smi writes).
std::string csv_record(const std::vector<std::string>& fields);

struct CsvFormat {
    bool header = true;
};

// "csv" or "csv,noheader" (nvidia-smi's spelling; "noheader" may come first). Throws UserError naming the
// accepted forms otherwise.
CsvFormat parse_csv_format(std::string_view format);

// The positions in `known` of the fields named in `requested` ("pid,user,tpcs"), in the order named
// (repeats allowed, as in nvidia-smi). Throws UserError for an empty list or an unknown field, in one line
// that lists every known field.
std::vector<std::size_t> select_csv_fields(std::string_view requested, const std::vector<std::string>& known);

}  // namespace gpupart
