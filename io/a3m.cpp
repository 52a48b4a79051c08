#include "io/a3m.h"

#include <cctype>
#include <sstream>

#include "io/sequence_input.h"
#include "io/text_input.h"
#include "io/text_safety.h"
#include "memory/error.h"

namespace cpufold {
namespace {

// One row being read: match columns so far and the insertions pending before the next one.
struct Row {
  std::string sequence;
  std::vector<std::int32_t> deletions;
  std::int32_t pending = 0;
  std::size_t header_line = 0;
};

// One sequence line of `row` (named `name`): upper case and '-' are match columns,
// lower case an insertion before the next one, '.' padding.
void add_sequence_line(Row& row, std::string_view line, std::size_t line_no,
                       const std::string& name, const std::string& source_name) {
  for (char c : line) {
    if ((c >= 'A' && c <= 'Z') || c == '-') {
      row.sequence += c;
      row.deletions.push_back(row.pending);
      row.pending = 0;
    } else if (c >= 'a' && c <= 'z') {
      ++row.pending;
    } else if (c == '.' || text::is_space(c)) {
      continue;
    } else if (c == '\0') {
      throw InputError(text::located(source_name, line_no,
                                     "NUL byte inside A3M row '" + text::excerpt(name) +
                                         "': MMseqs2 separates records with a NUL byte only "
                                         "right before '>'; this file is damaged or not A3M"));
    } else {
      throw InputError(text::located(source_name, line_no,
                                     "invalid character " + text::printable(c) + " in A3M row '" +
                                         text::excerpt(name) +
                                         "' (expected A-Z, '-', a-z insertions or '.')"));
    }
  }
}

// InputError unless there is a query with match columns and every row has as many.
void check_rows(const std::vector<Row>& rows, const Msa& msa, const std::string& source_name) {
  if (rows.empty()) throw InputError(text::located(source_name, 1, "empty A3M: no sequences"));
  const std::size_t n_res = rows.front().sequence.size();
  if (n_res == 0) {
    throw InputError(text::located(
        source_name, rows.front().header_line,
        "A3M query '" + text::excerpt(msa.descriptions.front()) + "' has no match columns"));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].sequence.size() != n_res) {
      throw InputError(text::located(source_name, rows[i].header_line,
                                     "A3M row '" + text::excerpt(msa.descriptions[i]) + "' has " +
                                         std::to_string(rows[i].sequence.size()) +
                                         " match columns but the query has " +
                                         std::to_string(n_res)));
    }
  }
}

}  // namespace

Msa parse_a3m(std::string_view text, const std::string& source_name) {
  text::check_text_encoding(text, source_name);
  Msa msa;
  std::vector<Row> rows;
  text::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t line_no = lines.number();
    line = text::trim(line);
    // MMseqs2 (ColabFold) writes a NUL byte before each record's '>'; a file may also end
    // with one.
    if (!line.empty() && line.front() == '\0') {
      const std::size_t data = line.find_first_not_of('\0');
      line = data == std::string_view::npos ? std::string_view{} : text::trim(line.substr(data));
      if (!line.empty() && line.front() != '>') {
        throw InputError(text::located(
            source_name, line_no,
            "NUL byte before sequence data: MMseqs2 separates A3M records with a NUL byte only "
            "right before '>'; this file is damaged or not A3M"));
      }
    }
    if (line.empty()) continue;
    if (line.front() == '>') {
      msa.descriptions.emplace_back(text::trim(line.substr(1)));
      rows.emplace_back();
      rows.back().header_line = line_no;
      continue;
    }
    if (rows.empty()) {
      if (line.front() == '#') continue;
      throw InputError(text::located(source_name, line_no,
                                     "no A3M header: expected a line starting with '>' before "
                                     "sequence data"));
    }
    add_sequence_line(rows.back(), line, line_no, msa.descriptions.back(), source_name);
  }
  check_rows(rows, msa, source_name);
  msa.sequences.reserve(rows.size());
  msa.deletions.reserve(rows.size());
  for (Row& row : rows) {
    msa.sequences.push_back(std::move(row.sequence));
    msa.deletions.push_back(std::move(row.deletions));
  }
  return msa;
}

Msa read_a3m(const std::filesystem::path& path) {
  return parse_a3m(read_input_text(path), path.string());
}

}  // namespace cpufold
