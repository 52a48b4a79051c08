// Helpers shared by the embedders: integer input features (aatype, residue_index, extra_msa,
// template_aatype) as contiguous int64 arrays, and weights copied out as float tables for the
// gathers that replace one-hot matmuls.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

// `t` (i64 or i32, any strides, any shape) as a contiguous i64 tensor of the same shape: `t`
// itself when it already is one, otherwise a copy allocated from `arena`. Throws InputError
// naming `what` for any other dtype.
Tensor contiguous_indices(const Tensor& t, Arena& arena, const char* what);
// The same with the copy made into `copy` (i64, t's shape), a buffer of the caller's list that
// holds it only when needs_index_copy(t) (empty otherwise).
Tensor contiguous_indices(const Tensor& t, const Tensor& copy, const char* what);
// Whether contiguous_indices copies `t`: it is not a contiguous i64 tensor. Its callers size
// the copy whatever the inputs' layout, which the planner does not know.
bool needs_index_copy(const Tensor& t);

// Throws InputError naming `what` when an element of `indices` (contiguous i64) lies outside
// [0, n). The embedders call it before their parallel gathers, which cannot throw.
void check_index_range(const Tensor& indices, std::int64_t n, const char* what);

// A contiguous f32 or bf16 weight as floats, row-major. Throws WeightsError naming `what`.
std::vector<float> weight_floats(const Tensor& w, const char* what);

// Throws InternalError unless `t` is f32 with exactly `shape` (strides free). `what` names it.
void expect_f32_shape(const Tensor& t, const Shape& shape, const char* what);

}  // namespace cpufold

namespace cpufold {

// OpenFold's distogram one-hot over squared distances (recycling embedder, template pair
// features): lower = linspace(min_bin, max_bin, n_bins)², upper_k = lower_{k+1} and the last
// upper edge is `inf` (already a squared distance); both edges are exclusive, so d² at an
// edge, d² <= min_bin² and d² >= inf fall in no bin (an all-zero one-hot row).
class DistanceBins {
 public:
  DistanceBins(float min_bin, float max_bin, std::int64_t n_bins, float inf);

  // The bin of squared distance d2, or -1 for none.
  int bin(float d2) const;
  std::int64_t size() const { return static_cast<std::int64_t>(lower_.size()); }
  float lower(std::int64_t k) const { return lower_[static_cast<std::size_t>(k)]; }
  float upper(std::int64_t k) const { return upper_[static_cast<std::size_t>(k)]; }

 private:
  std::vector<float> lower_, upper_;
};

}  // namespace cpufold
