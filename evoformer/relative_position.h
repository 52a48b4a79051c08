// AF2's relative position encoding of the pair representation (supplement Alg. 4).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 4
// relpos(i, j) = Linear(one_hot(clip(ri_i - ri_j, -k, k) + k)), with k = max_relative (32).
// The one-hot product is a row gather: relpos(i, j) = W[clip(...) + k] + b.
class RelativePositionEncoding {
 public:
  // scope: `evoformer`; weights `pair_activiations` (AF2's spelling) [2·max_relative + 1, c_z]
  // and bias [c_z]. The table is copied (bias folded in), so the store may close afterwards.
  RelativePositionEncoding(const ParamScope& scope, std::int64_t max_relative, std::int64_t c_z);

  // residue_index: [n_res] (i64 or i32); z: [n_res, n_res, c_z] (leading axes must collapse to
  // one row stride). z[i, j] = relpos(i, j), or z[i, j] += relpos(i, j) when `accumulate`.
  // Takes no scratch unless residue_index is not contiguous i64 (then n_res·8 bytes).
  void forward(const Tensor& residue_index, const Tensor& z, bool accumulate,
               const RunContext& ctx) const;

  // The table row (bias included) for the residue offset ri_i - ri_j.
  const float* row(std::int64_t offset) const {
    const std::int64_t bin = std::clamp(offset, -max_relative_, max_relative_) + max_relative_;
    return table_.data() + static_cast<std::size_t>(bin * c_z_);
  }

  std::int64_t max_relative() const { return max_relative_; }
  std::int64_t c_z() const { return c_z_; }

 private:
  std::int64_t max_relative_;
  std::int64_t c_z_;
  std::vector<float> table_;  // [2·max_relative + 1, c_z]: W + b
};

}  // namespace cpufold
