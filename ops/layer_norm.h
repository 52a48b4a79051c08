// LayerNorm over the last axis with learned scale and offset (Haiku's names for gamma, beta).
#pragma once

#include <vector>

#include "memory/tensor.h"
#include "ops/row_kernels.h"

namespace cpufold {

class LayerNorm {
 public:
  // AF2 (Haiku) and OpenFold both use eps = 1e-5.
  static constexpr float kDefaultEps = 1e-5f;
  // Widest row with a bf16 output (normalised in a stack buffer): AF2's widest is c_s = 384.
  static constexpr std::int64_t kMaxBf16Channels = 1024;

  // scale, offset: [c] (f32 or bf16); copied, so the weight file may be closed afterwards.
  LayerNorm(const Tensor& scale, const Tensor& offset, float eps = kDefaultEps);

  // x: [..., c] -> y: [..., c]. y may be x (in place) but must not partially overlap it.
  // x may be bf16 (a bf16 stored representation); y may be bf16 contiguous rows of at most
  // kMaxBf16Channels (the input of a bf16 Linear, rounded once). A bf16 side must not overlap
  // the other.
  void forward(const Tensor& x, const Tensor& y) const;

  std::int64_t channels() const { return static_cast<std::int64_t>(scale_.size()); }

 private:
  // The row kernel table's layer_norm_rows over rows, in parallel blocks.
  void normalise_in_blocks(const detail::NormRows& io, std::int64_t rows, std::int64_t cols) const;

  std::vector<float> scale_;
  std::vector<float> offset_;
  float eps_;
};

}  // namespace cpufold
