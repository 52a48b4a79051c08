#include "io/sequence_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "io/text_input.h"
#include "io/text_safety.h"
#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/unique_fd.h"

namespace cpufold {
namespace {

// A letter AF2's sequence_to_onehot(map_unknown_to_x=True) maps to X.
bool is_unknown_residue(char c) {
  return std::string_view("ACDEFGHIKLMNPQRSTVWY").find(c) == std::string_view::npos;
}

}  // namespace

std::size_t max_input_bytes() {
  const char* setting = std::getenv("CPUFOLD_MAX_INPUT_BYTES");
  if (setting == nullptr || *setting == '\0') return kDefaultMaxInputBytes;
  return parse_byte_size(setting, "CPUFOLD_MAX_INPUT_BYTES");
}

std::string read_input_text(const std::filesystem::path& path) {
  const std::size_t limit = max_input_bytes();
  const auto too_large = [&](const std::string& size) {
    return InputError(path.string() + ": " + size + " is more than the " + format_bytes(limit) +
                      " an input file may hold; set CPUFOLD_MAX_INPUT_BYTES (e.g. 8G) to read "
                      "it");
  };
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw InputError(path.string() + ": cannot open file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw InputError(path.string() + ": cannot read file: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path.string() + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    throw InputError(path.string() +
                     ": is a device or socket, not a file (input must be a regular file or a "
                     "pipe that ends)");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit)
    throw too_large(format_bytes(static_cast<std::size_t>(st.st_size)));
  // Read in pieces up to the limit: a pipe, or a file that grows while it is read, is cut off
  // there instead of filling memory.
  std::string text;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size) + kPiece);
  for (;;) {
    const std::size_t old_size = text.size();
    text.resize(old_size + kPiece);
    const ssize_t got = ::read(fd.get(), text.data() + old_size, kPiece);
    if (got < 0 && errno == EINTR) {
      text.resize(old_size);
      continue;
    }
    if (got < 0) throw InputError(path.string() + ": cannot read file: " + std::strerror(errno));
    text.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) break;
    if (text.size() > limit) throw too_large("more than " + format_bytes(limit));
  }
  text.shrink_to_fit();
  return text;
}

std::vector<SequenceRecord> parse_fasta(std::string_view text, const std::string& source_name) {
  text::check_text_encoding(text, source_name);
  std::vector<SequenceRecord> records;
  bool any_content = false;
  text::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t line_no = lines.number();
    line = text::trim(line);
    if (line.empty()) continue;
    any_content = true;
    if (line.front() == '>') {
      std::string_view header = text::trim(line.substr(1));
      std::size_t split = 0;
      while (split < header.size() && !text::is_space(header[split])) ++split;
      SequenceRecord record;
      record.header = std::string(header);
      record.id = std::string(header.substr(0, split));
      record.description = std::string(text::trim(header.substr(split)));
      record.line = line_no;
      records.push_back(std::move(record));
      continue;
    }
    if (records.empty()) {
      throw InputError(text::located(source_name, line_no,
                                     "no FASTA header: expected a line starting with '>' before "
                                     "sequence data"));
    }
    std::string& sequence = records.back().sequence;
    for (char c : line) {
      if (text::is_space(c)) continue;
      sequence += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (!any_content) throw InputError(text::located(source_name, 1, "empty FASTA file"));
  for (SequenceRecord& record : records) {
    if (!record.sequence.empty() && record.sequence.back() == '*') record.sequence.pop_back();
  }
  return records;
}

std::optional<std::string> query_error(const SequenceRecord& record, std::size_t max_length) {
  const std::string who = "record '" + text::excerpt(record.id) + "'";
  if (record.id.empty()) return std::string("header has no name after '>'");
  if (record.sequence.empty()) return who + ": header with an empty sequence";
  if (record.sequence.find(':') != std::string::npos) {
    return who + ": ':' separates chains of a complex; multimer not supported yet";
  }
  for (std::size_t i = 0; i < record.sequence.size(); ++i) {
    const char c = record.sequence[i];
    if (c >= 'A' && c <= 'Z') continue;
    std::string message =
        who + ": invalid character " + text::printable(c) + " at residue " + std::to_string(i + 1);
    if (c == '-' || c == '.') message += " (gaps are not allowed in a query)";
    message += "; a query holds amino-acid letters A-Z only";
    return message;
  }
  if (record.sequence.size() > max_length) {
    return who + ": sequence has " + std::to_string(record.sequence.size()) +
           " residues, more than the limit of " + std::to_string(max_length);
  }
  // AF2 maps every letter outside the 20 amino acids to X (unknown) and builds no atoms for
  // an unknown residue: a query of nothing else would give a structure file without atoms.
  if (std::all_of(record.sequence.begin(), record.sequence.end(), is_unknown_residue)) {
    return who +
           ": every residue is unknown (X; B, J, O, U and Z count as X), and AlphaFold2 "
           "builds no atoms for unknown residues, so there is no structure to predict; "
           "give the amino-acid sequence";
  }
  return std::nullopt;
}

std::vector<SequenceRecord> read_fasta(const std::filesystem::path& path, std::size_t max_length) {
  const std::string source = path.string();
  std::vector<SequenceRecord> records = parse_fasta(read_input_text(path), source);
  for (const SequenceRecord& record : records) {
    if (auto error = query_error(record, max_length)) {
      throw InputError(text::located(source, record.line, *error));
    }
  }
  return records;
}

std::string job_name(const std::string& header_id) {
  std::string name = header_id;
  for (char& c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  // A leading '.' would make every output file hidden ("..done.txt" for a header ".."), and
  // input directories skip such names: it becomes '_' too.
  for (char& c : name) {
    if (c != '.') break;
    c = '_';
  }
  return name;
}

}  // namespace cpufold
