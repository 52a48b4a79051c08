#include "io/text_safety.h"

#include <algorithm>
#include <cstdio>

namespace cpufold::text {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (1 to 4), or 0 when the byte
// there does not start one. Follows the table of well-formed byte sequences in the Unicode
// standard (section 3.9): no overlong forms, no surrogates, nothing past U+10FFFF.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b0 == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

void append_hex_byte(std::string& out, unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", b);
  out += buf;
}

}  // namespace

std::string safe_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const std::size_t length = sequence_length(bytes, i);
    if (length == 0) {
      append_hex_byte(out, b);
      ++i;
      continue;
    }
    if (length == 1) {
      if (b == '\t') {
        out += "\\t";
      } else if (b == '\n') {
        out += "\\n";
      } else if (b == '\r') {
        out += "\\r";
      } else if (b < 0x20 || b == 0x7F) {
        append_hex_byte(out, b);
      } else {
        out += static_cast<char>(b);
      }
    } else if (length == 2 && b == 0xC2 && static_cast<unsigned char>(bytes[i + 1]) < 0xA0) {
      // A C1 control (U+0080-U+009F): valid UTF-8, but a terminal may act on it.
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned char>(bytes[i + 1]));
      out += buf;
    } else {
      out.append(bytes.substr(i, length));
    }
    i += length;
  }
  return out;
}

bool is_valid_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t length = sequence_length(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = 0;
  while (end < max_bytes) {
    const std::size_t length = std::max<std::size_t>(sequence_length(s, end), 1);
    if (end + length > max_bytes) break;
    end += length;
  }
  return s.substr(0, end);
}

std::string excerpt(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::string out(utf8_prefix(s, max_bytes));
  out += "...";
  return out;
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace cpufold::text
