#include "ops/concat_linear.h"

#include <algorithm>
#include <string>

#include "memory/error.h"
#include "memory/tensor_copy.h"
#include "ops/compute_precision.h"
#include "ops/weight_cache.h"

namespace cpufold {
namespace {

std::int64_t leading_elements(const Tensor& w, int in_axes) {
  std::int64_t n = 1;
  for (int a = 0; a < in_axes; ++a) n *= w.dim(a);
  return n;
}

// An f32 contiguous copy of any f32/bf16 tensor.
std::vector<float> to_f32(const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  convert_tensor(t, Tensor(out.data(), DType::f32, t.shape()));
  return out;
}

}  // namespace

Linear concat_linear(const std::vector<Tensor>& weights, const std::vector<Tensor>& biases,
                     const LinearSource& source, int in_axes) {
  if (weights.empty()) throw InternalError("concat_linear: no weights");
  if (!biases.empty() && biases.size() != weights.size()) {
    throw InternalError("concat_linear: " + std::to_string(biases.size()) + " biases for " +
                        std::to_string(weights.size()) + " weights");
  }
  const std::int64_t c_in = leading_elements(weights[0], in_axes);
  std::vector<std::int64_t> c_out;
  std::int64_t total = 0;
  for (const Tensor& w : weights) {
    if (w.rank() <= in_axes || leading_elements(w, in_axes) != c_in) {
      throw WeightsError("concat_linear: weight " + w.describe() + " does not have " +
                         std::to_string(c_in) + " inputs over its first " +
                         std::to_string(in_axes) + " axes like " + weights[0].describe());
    }
    c_out.push_back(w.numel() / c_in);
    total += c_out.back();
  }

  for (std::size_t p = 0; p < biases.size(); ++p) {
    if (!biases[p].empty() && biases[p].numel() != c_out[p]) {
      throw WeightsError("concat_linear: bias " + biases[p].describe() + " does not match weight " +
                         weights[p].describe());
    }
  }
  DeferredWeights d;
  d.c_in = c_in;
  d.c_out = total;
  d.bias = !biases.empty();
  d.source = source;
  d.identity = combine_identity(static_cast<std::uint64_t>(in_axes), weights.size());
  for (const Tensor& w : weights)
    d.identity = combine_identity(d.identity, weight_identity(source.cache, w));
  for (const Tensor& b : biases)
    d.identity = combine_identity(d.identity, b.empty() ? 0 : weight_identity(source.cache, b));
  // Runs only when the concatenation is not in the weight cache.
  d.produce = [&](std::span<float> w_all, std::span<float> b_all) {
    std::fill(b_all.begin(), b_all.end(), 0.f);
    std::int64_t col = 0;
    for (std::size_t p = 0; p < weights.size(); ++p) {
      const std::vector<float> w = to_f32(weights[p]);
      for (std::int64_t i = 0; i < c_in; ++i) {
        std::copy_n(w.data() + i * c_out[p], c_out[p], w_all.data() + i * total + col);
      }
      if (!biases.empty() && !biases[p].empty()) {
        const std::vector<float> b = to_f32(biases[p]);
        std::copy(b.begin(), b.end(), b_all.begin() + col);
      }
      col += c_out[p];
    }
  };
  return Linear(d);
}

}  // namespace cpufold
