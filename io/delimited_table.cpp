#include "io/delimited_table.h"

#include <algorithm>

#include "io/text_input.h"
#include "io/text_safety.h"
#include "memory/error.h"

namespace cpufold {
namespace {

using text::located;
using text::trim;

std::string delimiter_name(char delimiter) {
  return delimiter == '\t' ? "tab" : std::string("'") + delimiter + "'";
}

// The fields of one line, or a message saying why it cannot be split.
struct SplitLine {
  std::vector<std::string> fields;
  std::string error;
};

SplitLine split_fields(std::string_view line, char delimiter) {
  SplitLine out;
  std::size_t i = 0;
  const auto skip_blanks = [&] {
    while (i < line.size() && line[i] != delimiter && text::is_space(line[i])) ++i;
  };
  while (true) {
    const std::size_t number = out.fields.size() + 1;
    skip_blanks();
    std::string field;
    if (i < line.size() && line[i] == '"') {
      const std::size_t open = i++;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += line[i++];
      }
      if (!closed) {
        out.error = "field " + std::to_string(number) + " opens a quote that is never closed (" +
                    text::excerpt(line.substr(open), 40) +
                    "); close it on the same line (a field cannot span lines) or remove it";
        return out;
      }
      skip_blanks();
      if (i < line.size() && line[i] != delimiter) {
        out.error = "field " + std::to_string(number) + " has text after its closing quote (" +
                    text::excerpt(line.substr(open), 40) +
                    "); quote the whole field and write "
                    "a '\"' inside it as '\"\"'";
        return out;
      }
    } else {
      const std::size_t end = std::min(line.find(delimiter, i), line.size());
      const std::string_view raw = trim(line.substr(i, end - i));
      if (raw.find('"') != std::string_view::npos) {
        out.error = "field " + std::to_string(number) + " (" + text::excerpt(raw, 40) +
                    ") has a stray '\"'; quote the whole field (\"...\") and write a '\"' "
                    "inside it as '\"\"'";
        return out;
      }
      field = std::string(raw);
      i = end;
    }
    out.fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // the delimiter
  }
  return out;
}

}  // namespace

Table parse_table(std::string_view text, const std::string& source_name, char delimiter) {
  text::check_text_encoding(text, source_name);
  Table table;
  text::Lines lines(text);
  std::string_view line;
  bool have_header = false;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    SplitLine split = split_fields(line, delimiter);
    if (!have_header) {
      table.header_line = lines.number();
      if (!split.error.empty()) {
        throw InputError(located(source_name, lines.number(),
                                 "header row: " + split.error + " (fields are separated by " +
                                     delimiter_name(delimiter) + ")"));
      }
      table.header = std::move(split.fields);
      have_header = true;
      continue;
    }
    TableRow row;
    row.line = lines.number();
    if (split.error.empty()) {
      row.fields = std::move(split.fields);
    } else {
      row.error = located(source_name, row.line, split.error);
    }
    table.rows.push_back(std::move(row));
  }
  if (!have_header) throw InputError(located(source_name, 1, "empty table: no header row"));
  return table;
}

}  // namespace cpufold
