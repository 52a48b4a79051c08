// Multiple sequence alignments in A3M (HH-suite, ColabFold/MMseqs2 output).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cpufold {

// An MSA as AF2's parsers return it; row 0 is the query.
struct Msa {
  std::vector<std::string> sequences;  // [n_seq] strings of n_res match columns: 'A'-'Z', '-' gaps
  std::vector<std::vector<std::int32_t>> deletions;  // [n_seq][n_res] residues deleted
                                                     // (inserted) before each match column
  std::vector<std::string> descriptions;             // [n_seq] header text after '>' / row names
};

// AF2 parsers.parse_a3m: uppercase letters and '-' are match columns, lowercase letters are
// insertions counted into the deletion count of the next match column (insertions after
// the last match column are dropped), '.' is ignored. Headers start with '>'; blank lines,
// LF, CRLF or lone-CR line ends, a UTF-8 byte-order mark and '#' lines before the first
// header (ColabFold's "#len\tcard" line) are accepted, as are NUL bytes right before a '>'
// or at the end (MMseqs2 and ColabFold separate records with them); a NUL elsewhere is an
// error naming its line.
// InputError "SOURCE:LINE: message" for: UTF-16/32 text, no sequences, a query without match
// columns, a row whose match-column count differs from the query's (both counts and the row's
// header are named), any other character (named, with its line).
Msa parse_a3m(std::string_view text, const std::string& source_name);

// `parse_a3m` on the content of `path` (errors name the path).
Msa read_a3m(const std::filesystem::path& path);

}  // namespace cpufold
