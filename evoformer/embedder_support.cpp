#include "evoformer/embedder_support.h"

#include <algorithm>
#include <string>

namespace cpufold {

namespace {

void check_index_type(const Tensor& t, const char* what) {
  if (t.dtype() != DType::i64 && t.dtype() != DType::i32) {
    throw InputError(std::string(what) + " must hold integers (i64 or i32), got " + t.describe());
  }
}

}  // namespace

bool needs_index_copy(const Tensor& t) {
  return t.dtype() != DType::i64 || !t.is_contiguous();
}

Tensor contiguous_indices(const Tensor& t, Arena& arena, const char* what) {
  if (!needs_index_copy(t)) return t;
  check_index_type(t, what);
  return contiguous_indices(t, arena.allocate(DType::i64, t.shape()), what);
}

Tensor contiguous_indices(const Tensor& t, const Tensor& copy, const char* what) {
  if (!needs_index_copy(t)) return t;
  check_index_type(t, what);
  if (copy.dtype() != DType::i64 || !(copy.shape() == t.shape()) || !copy.is_contiguous()) {
    throw InternalError(std::string(what) + ": no room " + t.shape().str() + " for its copy, got " +
                        copy.describe());
  }
  auto* dst = copy.data_as<std::int64_t>();
  const int rank = t.rank();
  std::int64_t idx[Shape::kMaxRank] = {};
  std::int64_t off = 0;
  const bool wide = t.dtype() == DType::i64;
  for (std::int64_t n = 0, total = t.numel(); n < total; ++n) {
    dst[n] = wide ? static_cast<const std::int64_t*>(t.data())[off]
                  : static_cast<const std::int32_t*>(t.data())[off];
    for (int a = rank - 1; a >= 0; --a) {
      off += t.stride(a);
      if (++idx[a] < t.dim(a)) break;
      off -= t.stride(a) * t.dim(a);
      idx[a] = 0;
    }
  }
  return copy;
}

void check_index_range(const Tensor& indices, std::int64_t n, const char* what) {
  const auto* p = indices.data_as<std::int64_t>();
  for (std::int64_t k = 0, total = indices.numel(); k < total; ++k) {
    if (p[k] < 0 || p[k] >= n) {
      throw InputError(std::string(what) + " holds " + std::to_string(p[k]) + " at flat index " +
                       std::to_string(k) + "; expected a value in [0, " + std::to_string(n) + ")");
    }
  }
}

std::vector<float> weight_floats(const Tensor& w, const char* what) {
  if (!w.is_contiguous()) {
    throw WeightsError(std::string(what) + " must be contiguous, got " + w.describe());
  }
  std::vector<float> out(static_cast<std::size_t>(w.numel()));
  if (w.dtype() == DType::f32) {
    const float* p = w.data_as<float>();
    out.assign(p, p + w.numel());
  } else if (w.dtype() == DType::bf16) {
    const bf16* p = w.data_as<bf16>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  } else {
    throw WeightsError(std::string(what) + " has dtype " + std::string(dtype_name(w.dtype())) +
                       "; expected f32 or bf16");
  }
  return out;
}

void expect_f32_shape(const Tensor& t, const Shape& shape, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == shape)) {
    throw InternalError(std::string(what) + " is " + t.describe() + "; expected f32" + shape.str());
  }
}

}  // namespace cpufold

namespace cpufold {

DistanceBins::DistanceBins(float min_bin, float max_bin, std::int64_t n_bins, float inf) {
  if (n_bins < 2 || !(max_bin > min_bin)) {
    throw InternalError("distogram needs at least 2 bins over an increasing range, got " +
                        std::to_string(n_bins) + " bins over [" + std::to_string(min_bin) + ", " +
                        std::to_string(max_bin) + "]");
  }
  // torch.linspace in float: start + k·step for the first half, end - (n-1-k)·step after.
  const float step = (max_bin - min_bin) / static_cast<float>(n_bins - 1);
  lower_.resize(static_cast<std::size_t>(n_bins));
  for (std::int64_t k = 0; k < n_bins; ++k) {
    const float v = k < n_bins / 2 ? min_bin + step * static_cast<float>(k)
                                   : max_bin - step * static_cast<float>(n_bins - 1 - k);
    lower_[static_cast<std::size_t>(k)] = v * v;
  }
  upper_.assign(lower_.begin() + 1, lower_.end());
  upper_.push_back(inf);
}

int DistanceBins::bin(float d2) const {
  // The last lower edge strictly below d2 is the only candidate.
  const auto it = std::lower_bound(lower_.begin(), lower_.end(), d2);
  if (it == lower_.begin()) return -1;
  const auto k = static_cast<std::size_t>(it - lower_.begin()) - 1;
  return d2 < upper_[k] ? static_cast<int>(k) : -1;
}

}  // namespace cpufold
