// How many rows a chunked loop handles per step: the RunContext::chunk contract shared by the
// attention-like modules of the Evoformer and the structure module.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace cpufold::detail {

// Rows handled per step of a chunked loop over n rows: chunk <= 0 means all of them.
inline std::int64_t chunk_rows(std::int64_t n, std::int64_t chunk) {
  return chunk <= 0 ? std::max<std::int64_t>(n, 1) : std::min(chunk, std::max<std::int64_t>(n, 1));
}

// Columns per step of a chunked loop over the n_res columns of an [n_seq, n_res, ...] MSA: a
// power of two making at most about chunk·n_res rows, what a row-wise step over the same MSA
// holds, so a deep MSA (the 5,120 extra rows) does not make its column steps 20 times larger than
// its row steps. A power of two, so that a spilled pass's slabs (a whole number of steps and of
// pages per row, memory/spill_window.h) can be as wide as its window allows: 3 columns of 1 KiB
// made them 12 columns whatever the window.
inline std::int64_t chunk_columns(std::int64_t n_res, std::int64_t n_seq, std::int64_t chunk) {
  if (chunk <= 0) return chunk_rows(n_res, chunk);
  const std::int64_t rows = std::max<std::int64_t>(n_seq, 1);
  const std::int64_t cols =
      std::max<std::int64_t>(1, chunk * std::max<std::int64_t>(n_res, 1) / rows);
  return chunk_rows(n_res,
                    static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(cols))));
}

}  // namespace cpufold::detail
