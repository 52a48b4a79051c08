// One Linear from several projections of the same input, their outputs side by side, so a
// module runs one GEMM over its input instead of one per projection (e.g. AF2's query, key
// and value, or the four projections of triangle multiplication).
#pragma once

#include <vector>

#include "memory/tensor.h"
#include "ops/linear.h"

namespace cpufold {

// weights[p]: [c_in axes..., c_out_p axes...] in AF2's layout (the first `in_axes` axes form
// c_in, the same for every p); biases: empty (no bias at all) or one per weight, each with
// c_out_p elements or an empty Tensor for a projection without bias (zeros).
// The result maps x: [..., c_in] -> y: [..., Σ_p c_out_p] with projection p in columns
// [Σ_{q<p} c_out_q, Σ_{q<=p} c_out_q), computing in source.precision. Weights are converted
// to f32 and copied, unless source.cache holds the concatenation already (then they are not
// read).
Linear concat_linear(const std::vector<Tensor>& weights, const std::vector<Tensor>& biases,
                     const LinearSource& source, int in_axes = 1);

}  // namespace cpufold
