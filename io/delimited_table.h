// CSV / TSV tables as colabfold_batch takes them: a header row naming the columns, then one
// row per job.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cpufold {

struct TableRow {
  std::size_t line = 0;             // 1-based line in the file
  std::vector<std::string> fields;  // unquoted and trimmed; empty when `error` is set
  std::string error;                // "SOURCE:LINE: message" when the row cannot be split
};

struct Table {
  std::size_t header_line = 0;  // 1-based
  std::vector<std::string> header;
  std::vector<TableRow> rows;  // blank lines are skipped
};

// Splits `text` into rows of fields separated by `delimiter` (',' or '\t'). Any line end
// (LF, CRLF, CR) and a UTF-8 byte-order mark are accepted. A field may be quoted as in
// RFC 4180: "a,b" holds the delimiter and "" stands for one '"'; blanks around a field are
// dropped. A quote left open at the end of its line (fields cannot span lines), text after
// a closing quote, or a '"' inside an unquoted field make that row's `error` (the other rows
// are still read). InputError "SOURCE:LINE: message" for a table without a header row or a
// header row that cannot be split.
Table parse_table(std::string_view text, const std::string& source_name, char delimiter);

}  // namespace cpufold
