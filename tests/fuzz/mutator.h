// Deterministic mutations of text inputs for the fuzz driver: the same seed gives the same
// inputs on every machine (no std:: distributions, whose output is implementation-defined).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cpufold::fuzz {

// SplitMix64: small, fast, and fully specified.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, n) (n > 0; the modulo bias is irrelevant here).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }

 private:
  std::uint64_t state_;
};

struct MutationLimits {
  std::size_t max_bytes = 1 << 18;   // inputs are cut back to this size
  std::size_t max_long_line = 5000;  // longest run a "very long line" mutation inserts
  std::size_t max_mutations = 4;     // 1 to this many per input
};

// Applies 1 to `limits.max_mutations` random mutations to `input`: bit flips, bytes replaced or
// inserted (line ends CR/LF/CRLF, NUL, 0xFF, invalid UTF-8, the syntax characters of FASTA, A3M,
// Stockholm and CSV), very long lines, deletion, duplication and truncation of ranges,
// splicing with `others` (another seed input), line-end conversion and byte-order marks.
void mutate(std::string& input, std::span<const std::string> others, Random& random,
            const MutationLimits& limits);

}  // namespace cpufold::fuzz
