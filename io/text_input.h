// Small text helpers shared by the FASTA, A3M and Stockholm parsers.
#pragma once

#include <cctype>
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

}  // namespace cpufold::text
