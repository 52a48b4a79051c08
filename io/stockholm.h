// Multiple sequence alignments in Stockholm format (jackhmmer / hmmsearch output).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "io/a3m.h"

namespace cpufold {

// Lines may end in LF, CRLF or a lone CR; a UTF-8 byte-order mark is skipped.
// AF2 parsers.parse_stockholm: '#' lines, '//' lines and blank lines are skipped; every
// other line is "NAME ALIGNED_SEQUENCE", and a name seen again (a later block) has its
// sequence appended. The first name is the query. Columns where the query has a gap are
// removed from every row; in each row a residue standing in such a column adds one to the
// deletion count of the next column the query keeps.
// AF2-DEVIATION: '.' counts as a gap like '-' and kept columns are uppercased ('.' -> '-'),
// so rows hold only 'A'-'Z' and '-' as in `parse_a3m` (AF2 keeps them verbatim and would
// fail on them later when mapping letters to ids).
// InputError "SOURCE:LINE: message" for: UTF-16/32 text, no sequences, a line that is not "NAME
// SEQUENCE", an invalid character (named), rows of different lengths (both named, with both
// lengths), a query made only of gaps. Whether the query is the expected one is for the caller to
// check (compare `sequences[0]` / `descriptions[0]`).
Msa parse_stockholm(std::string_view text, const std::string& source_name);

// `parse_stockholm` on the content of `path` (errors name the path).
Msa read_stockholm(const std::filesystem::path& path);

}  // namespace cpufold
