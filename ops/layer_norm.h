// LayerNorm over the last axis with learned scale and offset (Haiku's names for gamma, beta).
#pragma once

#include <vector>

#include "memory/tensor.h"

namespace cpufold {

class LayerNorm {
 public:
  // AF2 (Haiku) and OpenFold both use eps = 1e-5.
  static constexpr float kDefaultEps = 1e-5f;

  // scale, offset: [c] (f32 or bf16); copied, so the weight file may be closed afterwards.
  LayerNorm(const Tensor& scale, const Tensor& offset, float eps = kDefaultEps);

  // x: [..., c] -> y: [..., c]. y may be x (in place) but must not partially overlap it.
  // x may be bf16 (a bf16 stored representation; y stays f32, and must not overlap it).
  void forward(const Tensor& x, const Tensor& y) const;

  std::int64_t channels() const { return static_cast<std::int64_t>(scale_.size()); }

 private:
  std::vector<float> scale_;
  std::vector<float> offset_;
  float eps_;
};

}  // namespace cpufold
