#include "tests/fuzz/mutator.h"

#include <algorithm>
#include <string_view>

namespace cpufold::fuzz {
namespace {

// Bytes with a meaning to some parser, or known to trip text handling.
constexpr char kSpecialBytes[] = "\r\n\0\xFF>#\",\t -.:*X/\xC3\x80=a;'|\x1B";
constexpr std::string_view kSpecial(kSpecialBytes, sizeof kSpecialBytes - 1);

const std::string_view kSnippets[] = {
    "\r\n",
    "\r",
    "\n\n",
    "\xEF\xBB\xBF",      // UTF-8 BOM
    "\xC0\xAF",          // overlong '/'
    "\xED\xA0\x80",      // surrogate
    "\xF4\x90\x80\x80",  // past U+10FFFF
    "\xE2\x82",          // cut sequence
    "\n>",
    "\n>\n",
    "\n//\n",
    "\n# STOCKHOLM 1.0\n",
    "\n#=GS x DE y\n",
    "\"\"",
    ",\"",
    "\"a,b\"",
    "\nid,sequence\n",
    "\nid\tsequence\ta3m_path\n",
    "::",
    "\n>x\n\n",
    "\n>\xFF\xFE\x1B[2J\n",
    "XXXXXXXX",
    "----....",
    std::string_view("\0\0\0", 3),
};

std::size_t position(const std::string& s, Random& r) {
  return r.below(s.size() + 1);
}

std::string long_line(Random& r, std::size_t max_long_line) {
  static constexpr std::string_view kFill = "AaX->\"\xFF,\t.";
  const std::size_t n = 200 + r.below(std::max<std::size_t>(max_long_line, 201) - 199);
  std::string line = r.one_in(2) ? "\n" : "";
  if (r.one_in(3)) line += '>';
  line.append(n, kFill[r.below(kFill.size())]);
  if (r.one_in(2)) line += '\n';
  return line;
}

void convert_line_ends(std::string& s, Random& r) {
  const std::string_view to = r.one_in(2) ? "\r" : "\r\n";
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    if (c == '\n') {
      out += to;
    } else {
      out += c;
    }
  }
  s = std::move(out);
}

void mutate_once(std::string& s, std::span<const std::string> others, Random& r,
                 const MutationLimits& limits) {
  switch (r.below(13)) {
    case 0:  // flip a bit
      if (!s.empty()) s[r.below(s.size())] ^= static_cast<char>(1u << r.below(8));
      break;
    case 1:  // replace a byte with a special one
      if (!s.empty()) s[r.below(s.size())] = kSpecial[r.below(kSpecial.size())];
      break;
    case 2:  // insert special bytes
      s.insert(position(s, r), 1 + r.below(3), kSpecial[r.below(kSpecial.size())]);
      break;
    case 3:  // insert a snippet
      s.insert(position(s, r), kSnippets[r.below(std::size(kSnippets))]);
      break;
    case 4:  // a very long line
      s.insert(position(s, r), long_line(r, limits.max_long_line));
      break;
    case 5:  // delete a range
      if (!s.empty()) {
        const std::size_t at = r.below(s.size());
        s.erase(at, 1 + r.below(std::min<std::size_t>(s.size() - at, 64)));
      }
      break;
    case 6:  // duplicate a range
      if (!s.empty()) {
        const std::size_t at = r.below(s.size());
        const std::string copy =
            s.substr(at, 1 + r.below(std::min<std::size_t>(s.size() - at, 256)));
        s.insert(position(s, r), copy);
      }
      break;
    case 7:  // truncate
      s.resize(r.below(s.size() + 1));
      break;
    case 8:  // splice: this input's head, another's tail
      if (!others.empty()) {
        const std::string& other = others[r.below(others.size())];
        s = s.substr(0, position(s, r)) + other.substr(r.below(other.size() + 1));
      }
      break;
    case 9:
      convert_line_ends(s, r);
      break;
    case 10: {  // a byte-order mark: UTF-8, UTF-16 LE or UTF-16 BE
      static constexpr std::string_view kMarks[] = {"\xEF\xBB\xBF", "\xFF\xFE", "\xFE\xFF"};
      s.insert(0, kMarks[r.below(std::size(kMarks))]);
      break;
    }
    case 11:  // a random byte
      s.insert(position(s, r), 1, static_cast<char>(r.below(256)));
      break;
    default:  // swap the case of a range (lowercase letters mean insertions in A3M)
      if (!s.empty()) {
        const std::size_t at = r.below(s.size());
        const std::size_t end = std::min(s.size(), at + 1 + r.below(32));
        for (std::size_t i = at; i < end; ++i) {
          const char c = s[i];
          if (c >= 'a' && c <= 'z')
            s[i] = static_cast<char>(c - 'a' + 'A');
          else if (c >= 'A' && c <= 'Z')
            s[i] = static_cast<char>(c - 'A' + 'a');
        }
      }
      break;
  }
}

}  // namespace

std::uint64_t Random::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void mutate(std::string& input, std::span<const std::string> others, Random& random,
            const MutationLimits& limits) {
  const std::size_t count = 1 + random.below(std::max<std::size_t>(limits.max_mutations, 1));
  for (std::size_t i = 0; i < count; ++i) mutate_once(input, others, random, limits);
  if (input.size() > limits.max_bytes) input.resize(limits.max_bytes);
}

}  // namespace cpufold::fuzz
