#include "pipeline/features/feature_sampler.h"

#include "memory/error.h"

namespace cpufold {

RandomFeatureSampler::RandomFeatureSampler(std::uint64_t seed, std::int64_t iteration)
    : state_(seed) {
  // Separate streams per iteration: fold the iteration into the state through one mixing step.
  state_ = next() ^ (static_cast<std::uint64_t>(iteration) * 0xD1B54A32D192ED03ULL);
}

// splitmix64 (Steele, Lea and Flood 2014).
std::uint64_t RandomFeatureSampler::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double RandomFeatureSampler::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t RandomFeatureSampler::below(std::uint64_t bound) {
  // Rejection of the top partial block keeps every value equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t x;
  do {
    x = next();
  } while (x >= limit);
  return x % bound;
}

std::vector<std::int64_t> RandomFeatureSampler::permutation(std::int64_t n) {
  if (n < 0) throw InternalError("permutation of a negative count " + std::to_string(n));
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  // Fisher-Yates.
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(below(static_cast<std::uint64_t>(i) + 1));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

bool RandomFeatureSampler::mask_position(std::int64_t, std::int64_t, double fraction) {
  return uniform() < fraction;
}

// AF2-DEVIATION: AF2's shaped_categorical adds 1e-10 to every probability, so a token of
// probability 0 can be drawn with odds ~1e-10; here it never is.
int RandomFeatureSampler::replacement(std::int64_t, std::int64_t, std::span<const float> probs) {
  double total = 0;
  for (float p : probs) total += p > 0 ? p : 0;
  const double target = uniform() * total;
  double acc = 0;
  int last = -1;
  for (std::size_t t = 0; t < probs.size(); ++t) {
    if (!(probs[t] > 0)) continue;
    acc += probs[t];
    last = static_cast<int>(t);
    if (target < acc) return last;
  }
  if (last < 0) throw InternalError("masked-MSA replacement with no token of positive probability");
  return last;  // rounding left target == total
}

}  // namespace cpufold
