#include "io/stockholm.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <unordered_map>

#include "io/sequence_input.h"
#include "io/text_input.h"
#include "io/text_safety.h"
#include "memory/error.h"

namespace cpufold {
namespace {

bool is_gap(char c) {
  return c == '-' || c == '.';
}

struct NamedRow {
  std::string name;
  std::string aligned;
  std::size_t first_line = 0;
};

// One "NAME ALIGNED_SEQUENCE" line's parts, checked.
std::pair<std::string_view, std::string_view> split_row_line(std::string_view line,
                                                             std::size_t line_no,
                                                             const std::string& source_name) {
  std::size_t split = 0;
  while (split < line.size() && !text::is_space(line[split])) ++split;
  const std::string_view name = line.substr(0, split);
  const std::string_view sequence = text::trim(line.substr(split));
  if (sequence.empty() ||
      std::any_of(sequence.begin(), sequence.end(), [](char c) { return text::is_space(c); })) {
    throw InputError(
        text::located(source_name, line_no,
                      "expected \"NAME ALIGNED_SEQUENCE\" in a Stockholm line, got \"" +
                          text::excerpt(line) + "\""));
  }
  for (char c : sequence) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_gap(c);
    if (!ok) {
      throw InputError(text::located(source_name, line_no,
                                     "invalid character " + text::printable(c) +
                                         " in Stockholm row '" + text::excerpt(name) +
                                         "' (expected letters, '-' or '.')"));
    }
  }
  return {name, sequence};
}

// Every row, its blocks joined in file order (Stockholm interleaves long alignments).
std::vector<NamedRow> read_rows(std::string_view text, const std::string& source_name) {
  std::vector<NamedRow> rows;
  std::unordered_map<std::string, std::size_t> index_of;
  text::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t line_no = lines.number();
    line = text::trim(line);
    if (line.empty() || line.front() == '#' || line.substr(0, 2) == "//") continue;
    const auto [name, sequence] = split_row_line(line, line_no, source_name);
    auto [it, inserted] = index_of.try_emplace(std::string(name), rows.size());
    if (inserted) rows.push_back({std::string(name), {}, line_no});
    rows[it->second].aligned += sequence;
  }
  return rows;
}

// The query's residue count; InputError unless every row is as wide as the query and the query
// has residues.
std::size_t check_rows(const std::vector<NamedRow>& rows, const std::string& source_name) {
  if (rows.empty()) {
    throw InputError(text::located(source_name, 1, "Stockholm without sequences (no query)"));
  }
  const std::string& query = rows.front().aligned;
  for (const NamedRow& row : rows) {
    if (row.aligned.size() != query.size()) {
      throw InputError(text::located(
          source_name, row.first_line,
          "Stockholm row '" + text::excerpt(row.name) + "' has " +
              std::to_string(row.aligned.size()) + " columns but the query '" +
              text::excerpt(rows.front().name) + "' has " + std::to_string(query.size())));
    }
  }
  std::size_t n_res = 0;
  for (char c : query) n_res += is_gap(c) ? 0 : 1;
  if (n_res == 0) {
    throw InputError(
        text::located(source_name, rows.front().first_line,
                      "Stockholm query '" + text::excerpt(rows.front().name) + "' has only gaps"));
  }
  return n_res;
}

}  // namespace

Msa parse_stockholm(std::string_view text, const std::string& source_name) {
  text::check_text_encoding(text, source_name);
  const std::vector<NamedRow> rows = read_rows(text, source_name);
  const std::size_t n_res = check_rows(rows, source_name);
  const std::string& query = rows.front().aligned;
  Msa msa;
  msa.sequences.reserve(rows.size());
  msa.deletions.reserve(rows.size());
  msa.descriptions.reserve(rows.size());
  for (const NamedRow& row : rows) {
    std::string sequence;
    std::vector<std::int32_t> deletions;
    sequence.reserve(n_res);
    deletions.reserve(n_res);
    std::int32_t deletion_count = 0;
    for (std::size_t col = 0; col < query.size(); ++col) {
      const char res = row.aligned[col];
      if (is_gap(query[col])) {
        if (!is_gap(res)) ++deletion_count;  // a residue the query does not have
        continue;
      }
      sequence +=
          is_gap(res) ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(res)));
      deletions.push_back(deletion_count);
      deletion_count = 0;
    }
    msa.sequences.push_back(std::move(sequence));
    msa.deletions.push_back(std::move(deletions));
    msa.descriptions.push_back(row.name);
  }
  return msa;
}

Msa read_stockholm(const std::filesystem::path& path) {
  return parse_stockholm(read_input_text(path), path.string());
}

}  // namespace cpufold
