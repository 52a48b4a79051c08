// Query input for `cpufold predict`: FASTA files (ColabFold conventions) and job names.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpufold {

// Longest query accepted by default (residues).
inline constexpr std::size_t kDefaultMaxQueryLength = 10000;

struct SequenceRecord {
  std::string header;       // the whole header line after '>', trimmed
  std::string id;           // header up to the first whitespace
  std::string description;  // rest of the header, trimmed
  std::string sequence;     // uppercase, whitespace and a final '*' removed
  std::size_t line = 0;     // 1-based line of the '>' header
};

// Splits FASTA text into records. Only structural errors throw (InputError,
// "SOURCE:LINE: message"): empty input, text before the first '>' header, UTF-16/32 text.
// Lines may end in LF, CRLF or a lone CR (classic Mac OS) and the file may start with a
// UTF-8 byte-order mark; sequence lines may be wrapped, be lowercase (uppercased) and be
// separated by blank lines; a '*' terminating a sequence is dropped. Record contents are NOT
// validated: call `query_error` per record (a batch can skip one bad job).
std::vector<SequenceRecord> parse_fasta(std::string_view text, const std::string& source_name);

// Why `record` cannot be folded as a monomer query, or nullopt when it can. The message
// names the record id and, for a bad character, the character and the residue position
// (1-based); it carries no file/line prefix (the caller adds "FILE:record.line: ").
// Refused: an empty header name, an empty sequence, ':' ("multimer not supported yet"),
// any character that is not a letter A-Z (gaps '-' included), more than `max_length`
// residues, and a sequence whose every residue is unknown (X, or B J O U Z which AF2 maps
// to X): AF2 builds no atoms for an unknown residue, so such a job would write a structure
// without atoms (AF2 and ColabFold write it silently; cpufold refuses the job instead).
// Letters: all 26 are accepted, as AF2's sequence_to_onehot(map_unknown_to_x=True) does;
// the 20 standard amino acids and X keep their meaning and B, J, O, U, Z are kept in
// `sequence` as written -- the feature builder maps them to X for `aatype` (as AF2 does),
// so the query still matches the first row of its MSA letter for letter.
std::optional<std::string> query_error(const SequenceRecord& record,
                                       std::size_t max_length = kDefaultMaxQueryLength);

// Reads `path` with `parse_fasta` and refuses the file (InputError "FILE:LINE: message")
// at the first record for which `query_error` reports a problem.
std::vector<SequenceRecord> read_fasta(const std::filesystem::path& path,
                                       std::size_t max_length = kDefaultMaxQueryLength);

// A file-system-safe job name: every character outside [A-Za-z0-9_.-] becomes '_', and so do
// leading dots (no hidden output files: ".." gives "__").
std::string job_name(const std::string& header_id);

// The most bytes one input file (FASTA, A3M, Stockholm, CSV/TSV) may hold unless
// CPUFOLD_MAX_INPUT_BYTES says otherwise: far above any real query file or MSA a run can use,
// far below what reading it whole would cost a node.
inline constexpr std::size_t kDefaultMaxInputBytes = std::size_t{1} << 30;
// kDefaultMaxInputBytes, or CPUFOLD_MAX_INPUT_BYTES ("4G"; InputError when it is not a size).
std::size_t max_input_bytes();

// The whole content of a text input file: a regular file or a pipe (process substitution),
// at most max_input_bytes(). InputError naming the path when it cannot be read, is larger,
// or is a directory, device or socket (/dev/zero would never end).
std::string read_input_text(const std::filesystem::path& path);

}  // namespace cpufold
