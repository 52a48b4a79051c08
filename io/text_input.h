// Small text helpers shared by the FASTA, A3M, Stockholm and CSV/TSV parsers.
#pragma once

#include <cctype>
#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>

namespace cpufold::text {

inline bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// "SOURCE:LINE: message", the form every parser error takes.
inline std::string located(const std::string& source, std::size_t line,
                           const std::string& message) {
  return source + ":" + std::to_string(line) + ": " + message;
}

// A character as a user can read it in a message: 'x', or "byte 0x7" for control bytes.
inline std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isprint(u)) return std::string("'") + c + "'";
  std::ostringstream out;
  out << "byte 0x" << std::hex << static_cast<int>(u);
  return out.str();
}

// The lines of a text file however it was saved: LF (Unix), CRLF (Windows) and a lone CR
// (classic Mac OS) each end a line, and a UTF-8 byte-order mark at the start is skipped.
// Line numbers count line ends of any kind, as an editor shows them.
class Lines {
 public:
  explicit Lines(std::string_view text);
  // The next line, without its line end; false once the text is used up.
  bool next(std::string_view& line);
  // 1-based number of the line `next` returned last (0 before the first).
  std::size_t number() const { return number_; }

 private:
  std::string_view rest_;
  std::size_t number_ = 0;
};

// Refuses text a parser would misread as garbage: UTF-16 or UTF-32 (named by their
// byte-order marks), with InputError "SOURCE:1: ..." saying how to save the file instead.
void check_text_encoding(std::string_view text, const std::string& source_name);

}  // namespace cpufold::text
