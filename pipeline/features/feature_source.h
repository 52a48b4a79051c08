// Where the processed features of each recycling iteration come from: the contract between the
// data pipeline (which produces them) and the model runner (which reads them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "evoformer/trunk_inputs.h"
#include "memory/arena.h"

namespace cpufold {

// AF2 resamples the MSA per iteration, so each iteration reads its own sample.
struct FeatureSource {
  std::int64_t iterations = 0;          // iterations available
  std::size_t bytes_per_iteration = 0;  // arena bytes read() takes for one iteration
  std::function<TrunkInputs(std::int64_t iteration, Arena& arena)> read;
};

}  // namespace cpufold
