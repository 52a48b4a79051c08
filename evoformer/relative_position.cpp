#include "evoformer/relative_position.h"

#include <string>

#include "evoformer/embedder_support.h"
#include "ops/parallel_rows.h"
#include "ops/row_view.h"

namespace cpufold {

RelativePositionEncoding::RelativePositionEncoding(const ParamScope& scope,
                                                   std::int64_t max_relative, std::int64_t c_z)
    : max_relative_(max_relative), c_z_(c_z) {
  const ParamScope s = scope / "pair_activiations";
  const std::int64_t bins = 2 * max_relative + 1;
  table_ = weight_floats(s.get("weights", {bins, c_z}), "pair_activiations weights");
  const std::vector<float> bias = weight_floats(s.get("bias", {c_z}), "pair_activiations bias");
  // OpenFold's one-hot Linear yields exactly W[bin] + b: fold the bias in once.
  for (std::int64_t b = 0; b < bins; ++b) {
    for (std::int64_t c = 0; c < c_z; ++c) {
      table_[static_cast<std::size_t>(b * c_z + c)] += bias[static_cast<std::size_t>(c)];
    }
  }
}

void RelativePositionEncoding::forward(const Tensor& residue_index, const Tensor& z,
                                       bool accumulate, const RunContext& ctx) const {
  const std::int64_t n_res = residue_index.numel();
  if (residue_index.rank() != 1 || z.rank() != 3 || z.dim(0) != n_res || z.dim(1) != n_res ||
      z.dim(2) != c_z_ || z.dtype() != DType::f32) {
    throw InternalError("RelativePositionEncoding given residue_index " + residue_index.describe() +
                        " and z " + z.describe());
  }
  ArenaScope scope(ctx.arena());
  const Tensor ri_t = contiguous_indices(residue_index, ctx.arena(), "residue_index");
  const std::int64_t* ri = ri_t.data_as<std::int64_t>();
  const RowView vz = row_view(z, "relative position output");
  const std::int64_t c_z = c_z_;
  detail::for_each_row(n_res, n_res * c_z, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < n_res; ++j) {
      const float* w = row(ri[i] - ri[j]);
      float* dst = vz.row(i * n_res + j);
      if (accumulate) {
        for (std::int64_t c = 0; c < c_z; ++c) dst[c] += w[c];
      } else {
        for (std::int64_t c = 0; c < c_z; ++c) dst[c] = w[c];
      }
    }
  });
}

}  // namespace cpufold
