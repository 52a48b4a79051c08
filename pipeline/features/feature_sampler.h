// The only source of randomness of the feature pipeline (AF2 sample_msa, crop_extra_msa and
// make_masked_msa). Production draws from a seeded generator; parity tests replay the
// choices recovered from a reference file's inputs/.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cpufold {

class FeatureSampler {
 public:
  virtual ~FeatureSampler() = default;
  // A uniformly random permutation of [0, n).
  virtual std::vector<std::int64_t> permutation(std::int64_t n) = 0;
  // Whether masked-MSA replacement touches (row, col) of the sampled cluster rows; true with
  // probability `fraction` (AF2 masked_msa_replace_fraction).
  virtual bool mask_position(std::int64_t row, std::int64_t col, double fraction) = 0;
  // The replacement token at a masked position, drawn from `probs` (23 entries: 20 amino
  // acids, X, gap, mask token 22; they sum to 1). Never a token of probability 0.
  virtual int replacement(std::int64_t row, std::int64_t col, std::span<const float> probs) = 0;
};

// Seeded: the same (seed, iteration) gives the same features on every machine (splitmix64,
// no std:: distributions, whose output is implementation-defined). Draws happen in call order.
class RandomFeatureSampler final : public FeatureSampler {
 public:
  RandomFeatureSampler(std::uint64_t seed, std::int64_t iteration);
  std::vector<std::int64_t> permutation(std::int64_t n) override;
  bool mask_position(std::int64_t row, std::int64_t col, double fraction) override;
  int replacement(std::int64_t row, std::int64_t col, std::span<const float> probs) override;

 private:
  std::uint64_t next();
  double uniform();                          // [0, 1), 53 random bits
  std::uint64_t below(std::uint64_t bound);  // uniform in [0, bound), bound > 0, unbiased
  std::uint64_t state_;
};

}  // namespace cpufold
