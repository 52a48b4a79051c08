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

// Columns per step of a chunked loop over the n_res columns of an [n_seq, n_res, ...] MSA: as
// many as make about chunk·n_res rows, what a row-wise step over the same MSA holds, so a deep
// MSA (the 5,120 extra rows) does not make its column steps 20 times larger than its row steps.
inline std::int64_t chunk_columns(std::int64_t n_res, std::int64_t n_seq, std::int64_t chunk) {
  if (chunk <= 0) return chunk_rows(n_res, chunk);
  const std::int64_t rows = std::max<std::int64_t>(n_seq, 1);
  return chunk_rows(n_res,
                    std::max<std::int64_t>(1, chunk * std::max<std::int64_t>(n_res, 1) / rows));
}

}  // namespace cpufold::detail
