#include "evoformer/msa_layout.h"

#include <cstring>
#include <string>

#include "ops/bf16_rows.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"
#include "ops/tensor_checks.h"

namespace cpufold::detail {

namespace {

// gather_columns (accumulate: gather_add_columns).
void gather(const Tensor& src, std::int64_t j0, const Tensor& dst, bool accumulate) {
  if (src.rank() != 3 || dst.rank() != 3) {
    throw InternalError("gather_columns needs rank-3 tensors, got " + src.describe() + " -> " +
                        dst.describe());
  }
  const std::int64_t n_j = dst.dim(0), n_row = src.dim(0), c = src.dim(2);
  check_activation(src, src.shape(), "gather_columns source");
  if (j0 < 0 || j0 + n_j > src.dim(1)) {
    throw InternalError("gather_columns: columns [" + std::to_string(j0) + ", " +
                        std::to_string(j0 + n_j) + ") of " + src.describe());
  }
  check_f32(dst, Shape{n_j, n_row, c}, "gather_columns destination");
  if (!dst.is_contiguous()) throw InternalError("gather_columns destination must be contiguous");
  float* dp = static_cast<float*>(dst.data());
  const std::int64_t ss0 = src.stride(0), ss1 = src.stride(1);
  const std::int64_t total = n_j * n_row;
  const bool wide = src.dtype() == DType::bf16;
  const auto add = row_kernels().add;
#pragma omp parallel for schedule(static) if (total * c >= (1 << 14))
  for (std::int64_t t = 0; t < total; ++t) {
    const std::int64_t j = t / n_row, s = t % n_row, at = s * ss0 + (j0 + j) * ss1;
    if (accumulate) {
      float* const d = dp + t * c;
      if (wide) {
        const bf16* const w = static_cast<const bf16*>(src.data()) + at;
        for (std::int64_t k = 0; k < c; ++k) d[k] += static_cast<float>(w[k]);
      } else {
        add(d, static_cast<const float*>(src.data()) + at, c);
      }
    } else if (wide) {
      bf16_to_f32(static_cast<const bf16*>(src.data()) + at, dp + t * c, c);
    } else {
      std::memcpy(dp + t * c, static_cast<const float*>(src.data()) + at,
                  static_cast<std::size_t>(c) * sizeof(float));
    }
  }
}

}  // namespace

void gather_columns(const Tensor& src, std::int64_t j0, const Tensor& dst) {
  gather(src, j0, dst, false);
}

void gather_add_columns(const Tensor& src, std::int64_t j0, const Tensor& dst) {
  gather(src, j0, dst, true);
}

namespace {

// add_columns (accumulate) and set_columns.
void scatter_columns(const Tensor& src, const Tensor& dst, std::int64_t j0, bool accumulate,
                     const std::string& name) {
  if (src.rank() != 3 || !src.is_contiguous() || src.dtype() != DType::f32) {
    throw InternalError(name + " source must be contiguous f32 [j, row, c], got " + src.describe());
  }
  const std::int64_t n_j = src.dim(0), n_row = src.dim(1), c = src.dim(2);
  check_activation(dst, dst.shape(), (name + " destination").c_str());
  if (dst.rank() != 3 || dst.dim(0) != n_row || dst.dim(2) != c || j0 < 0 ||
      j0 + n_j > dst.dim(1)) {
    throw InternalError(name + ": " + src.describe() + " into columns from " + std::to_string(j0) +
                        " of " + dst.describe());
  }
  const float* sp = static_cast<const float*>(src.data());
  const std::int64_t ds0 = dst.stride(0), ds1 = dst.stride(1);
  const auto add = row_kernels().add;
  const bool narrow = dst.dtype() == DType::bf16;
  const auto narrow_kernel = row_kernels().to_bf16;
  // Walk the destination in its own row order so each thread writes distinct memory.
  const std::int64_t total = n_row * n_j;
#pragma omp parallel for schedule(static) if (total * c >= (1 << 14))
  for (std::int64_t t = 0; t < total; ++t) {
    const std::int64_t s = t / n_j, j = t % n_j, at = s * ds0 + (j0 + j) * ds1;
    const float* update = sp + (j * n_row + s) * c;
    if (narrow && accumulate) {
      add_into_bf16(static_cast<bf16*>(dst.data()) + at, update, c, narrow_kernel);
    } else if (narrow) {
      narrow_kernel(update, static_cast<bf16*>(dst.data()) + at, c);
    } else if (accumulate) {
      add(static_cast<float*>(dst.data()) + at, update, c);
    } else {
      std::memcpy(static_cast<float*>(dst.data()) + at, update,
                  static_cast<std::size_t>(c) * sizeof(float));
    }
  }
}

}  // namespace

void add_columns(const Tensor& src, const Tensor& dst, std::int64_t j0) {
  scatter_columns(src, dst, j0, true, "add_columns");
}

void set_columns(const Tensor& src, const Tensor& dst, std::int64_t j0) {
  scatter_columns(src, dst, j0, false, "set_columns");
}

void add_rows(const Tensor& src, const Tensor& dst) {
  if (src.dtype() != DType::f32 || !src.is_contiguous() || !(src.shape() == dst.shape())) {
    throw InternalError("add_rows: " + src.describe() + " (contiguous f32) into " + dst.describe());
  }
  const RowShape rows = row_shape(dst, "add_rows destination");
  const float* sp = static_cast<const float*>(src.data());
  const auto add = row_kernels().add;
  const auto narrow_kernel = row_kernels().to_bf16;
  const bool narrow = dst.dtype() == DType::bf16;
#pragma omp parallel for schedule(static) if (rows.rows * rows.cols >= (1 << 14))
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    const float* update = sp + r * rows.cols;
    if (narrow) {
      add_into_bf16(static_cast<bf16*>(dst.data()) + r * rows.ld, update, rows.cols, narrow_kernel);
    } else {
      add(static_cast<float*>(dst.data()) + r * rows.ld, update, rows.cols);
    }
  }
}

void mask_to_bias(const Tensor& mask, float inf, const Tensor& dst) {
  if (mask.rank() != 2 || mask.dtype() != DType::f32 || dst.dtype() != DType::f32 ||
      !(mask.shape() == dst.shape())) {
    throw InternalError("mask_to_bias: mask " + mask.describe() + " and bias " + dst.describe() +
                        " must be f32 matrices of one shape");
  }
  const float* mp = static_cast<const float*>(mask.data());
  float* dp = static_cast<float*>(dst.data());
  for (std::int64_t a = 0; a < mask.dim(0); ++a) {
    for (std::int64_t b = 0; b < mask.dim(1); ++b) {
      dp[a * dst.stride(0) + b * dst.stride(1)] =
          inf * (mp[a * mask.stride(0) + b * mask.stride(1)] - 1.f);
    }
  }
}

}  // namespace cpufold::detail
