// The valid range of each numeric predict option, in one place: the command line's validators
// (pipeline/cli/option_checks) and predict()'s guard for callers that skip the command line
// both read these.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace cpufold {

// Every limit below is far beyond real use; each exists to turn a typo or a wrapped negative
// into a message instead of a hang, a crash or a silently wrong run.

// Recycling iterations: ColabFold's deepest preset uses 48; each one is a full model pass.
inline constexpr std::int64_t kMaxRecycles = 1000;
// Seeds per model: massive-sampling protocols run ~1200 per model; each is a full model run.
inline constexpr std::int64_t kMaxSeeds = 10000;
// AlphaFold2's run_alphafold draws seeds below sys.maxsize; seeds stay signed 64-bit values
// so that config.json and file names read back the same in every language.
inline constexpr std::int64_t kMaxRandomSeed = std::numeric_limits<std::int64_t>::max();
// MSA rows, residues and chunk sizes: far beyond AF2's hit limits and query lengths, and small
// enough that products such as rows x residues x channels x 4 bytes stay inside 64 bits (an
// over-large run then fails on memory with exit 4 rather than on a wrapped size).
inline constexpr std::int64_t kMaxRows = 1'000'000;
// Å of RMS change of the CA-CA distances: any value above this stops at the first check for any
// protein, so a larger one is a typo.
inline constexpr double kMaxEarlyStopTolerance = 100;
// Trunk passes per recycle with --num-ensemble: AF2's CASP14 setting was 8; each costs a trunk.
inline constexpr std::int64_t kMaxEnsemble = 100;

struct IntegerRange {
  std::string_view option;  // "--num-recycle"
  std::int64_t min = 0, max = 0;
};

inline constexpr IntegerRange kModelNumberRange{"--model-order", 1, 5};  // AlphaFold2's five
inline constexpr IntegerRange kNumModelsRange{"--num-models", 1, 5};
inline constexpr IntegerRange kNumRecycleRange{"--num-recycle", 0, kMaxRecycles};
inline constexpr IntegerRange kNumEnsembleRange{"--num-ensemble", 1, kMaxEnsemble};
inline constexpr IntegerRange kNumSeedsRange{"--num-seeds", 1, kMaxSeeds};
inline constexpr IntegerRange kRandomSeedRange{"--random-seed", 0, kMaxRandomSeed};
inline constexpr IntegerRange kMaxSeqRange{"--max-seq", 1, kMaxRows};  // at least the query row
inline constexpr IntegerRange kMaxExtraSeqRange{"--max-extra-seq", 0, kMaxRows};
inline constexpr IntegerRange kChunkSizeRange{"--chunk-size", 0, kMaxRows};  // 0: no slicing

// "an integer from 1 to 5" and, with a reason, "an integer from 1 to 8 (why)".
std::string integer_range_text(std::int64_t min, std::int64_t max, std::string_view why = {});

// InputError "--num-seeds: '0' is out of range: expected an integer from 1 to 10000" (the
// command line's words) unless `value` is within `range`.
void require_in_range(const IntegerRange& range, std::int64_t value);

}  // namespace cpufold
