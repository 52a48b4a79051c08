// How many rows a chunked loop handles per step: the RunContext::chunk contract shared by the
// attention-like modules of the Evoformer and the structure module.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cpufold::detail {

// Rows handled per step of a chunked loop over n rows: chunk <= 0 means all of them.
inline std::int64_t chunk_rows(std::int64_t n, std::int64_t chunk) {
  return chunk <= 0 ? std::max<std::int64_t>(n, 1) : std::min(chunk, std::max<std::int64_t>(n, 1));
}

}  // namespace cpufold::detail
