// A row loop over the AVX2 kernel rather than oneDNN's layer_normalization primitive: measured
// on the AVX2 EPYC (tests/bench/primitives_bench.cpp, 16 MiB inputs) the two are even at
// c = 128 and 384, oneDNN ~25% ahead at c = 64 and ours ~25% ahead at c = 256, both close to
// memory-bound. The row kernel needs no primitive per shape and handles strided rows and
// in-place use directly, so it stays. With AVX-512, AF2's widths take the table's
// layer_norm_rows (the row in registers, bf16 read and written directly: 52 -> 12 ns per row of
// 64 bf16 channels, single thread, fp32 out; 64 -> 15 ns bf16 out), with the same bits.
#include "ops/layer_norm.h"

#include <algorithm>
#include <cstddef>

#include "ops/bf16_rows.h"
#include "ops/parallel_rows.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

std::vector<float> to_floats(const Tensor& t, const char* what) {
  if (t.rank() != 1 || !t.is_contiguous()) {
    throw WeightsError(std::string("LayerNorm ") + what + " must be a contiguous vector, got " +
                       t.describe());
  }
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  if (t.dtype() == DType::f32) {
    const float* p = t.data_as<float>();
    out.assign(p, p + t.numel());
  } else if (t.dtype() == DType::bf16) {
    const bf16* p = t.data_as<bf16>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  } else {
    throw WeightsError(std::string("LayerNorm ") + what + " has dtype " +
                       std::string(dtype_name(t.dtype())) + "; expected f32 or bf16");
  }
  return out;
}

}  // namespace

LayerNorm::LayerNorm(const Tensor& scale, const Tensor& offset, float eps)
    : scale_(to_floats(scale, "scale")), offset_(to_floats(offset, "offset")), eps_(eps) {
  if (scale_.size() != offset_.size()) {
    throw WeightsError("LayerNorm scale " + scale.describe() + " and offset " + offset.describe() +
                       " differ in size");
  }
}

void LayerNorm::forward(const Tensor& x, const Tensor& y) const {
  const auto& kernels = detail::row_kernels();
  const auto kernel = kernels.layer_norm;
  const auto shape_error = [&] {
    return InternalError("LayerNorm over " + std::to_string(channels()) + " channels given " +
                         x.describe() + " -> " + y.describe());
  };
  const RowShape sx = row_shape(x, "LayerNorm input");
  if (sx.cols != channels()) throw shape_error();
  const bool y16 = y.dtype() == DType::bf16;
  if (y16) {
    // Rounded once as stored, for a bf16 Linear to read in place.
    if (!y.is_contiguous() || y.numel() != sx.rows * sx.cols) throw shape_error();
    if (sx.cols > kMaxBf16Channels) {
      throw InternalError("LayerNorm: a bf16 output over " + std::to_string(sx.cols) +
                          " channels (at most " + std::to_string(kMaxBf16Channels) + ")");
    }
  }
  if (kernels.layer_norm_rows != nullptr && detail::norm_rows_width(sx.cols)) {
    // The same values as the loops below, with each row read and written once.
    detail::NormRows io{x.data(), sx.ld, x.dtype() == DType::bf16, y.data(), sx.cols, y16};
    if (!y16) {
      const RowView vy = row_view(y, "LayerNorm output");
      if (vy.cols != channels() || sx.rows != vy.rows) throw shape_error();
      io.ld_y = vy.ld;
    }
    normalise_in_blocks(io, sx.rows, sx.cols);
    return;
  }
  if (y16) {
    bf16* const yp = y.data_as<bf16>();
    detail::for_each_row(sx.rows, sx.cols, [&](std::int64_t i) {
      float row[kMaxBf16Channels];
      if (x.dtype() == DType::bf16) {
        detail::bf16_to_f32(x.data_as<bf16>() + i * sx.ld, row, sx.cols);
      } else {
        std::copy_n(x.data_as<float>() + i * sx.ld, sx.cols, row);
      }
      kernel(row, row, scale_.data(), offset_.data(), eps_, sx.cols);
      kernels.to_bf16(row, yp + i * sx.cols, sx.cols);
    });
    return;
  }
  const RowView vy = row_view(y, "LayerNorm output");
  if (vy.cols != channels() || sx.rows != vy.rows) throw shape_error();
  if (x.dtype() == DType::bf16) {
    // Widen each row into y (exact), then normalise it in place.
    const bf16* xp = x.data_as<bf16>();
    detail::for_each_row(sx.rows, sx.cols, [&](std::int64_t i) {
      detail::bf16_to_f32(xp + i * sx.ld, vy.row(i), sx.cols);
      kernel(vy.row(i), vy.row(i), scale_.data(), offset_.data(), eps_, sx.cols);
    });
    return;
  }
  const RowView vx = row_view(x, "LayerNorm input");
  detail::for_each_row(vx.rows, vx.cols, [&](std::int64_t i) {
    kernel(vx.row(i), vy.row(i), scale_.data(), offset_.data(), eps_, vx.cols);
  });
}

void LayerNorm::normalise_in_blocks(const detail::NormRows& io, std::int64_t rows,
                                    std::int64_t cols) const {
  constexpr std::int64_t kBlock = 32;  // rows per call: amortises the call, balances the threads
  const auto kernel = detail::row_kernels().layer_norm_rows;
  const std::size_t x_size = io.x_bf16 ? sizeof(bf16) : sizeof(float);
  const std::size_t y_size = io.y_bf16 ? sizeof(bf16) : sizeof(float);
  const std::int64_t blocks = (rows + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (rows * cols >= detail::kMinParallelElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t r0 = b * kBlock;
    detail::NormRows block = io;
    block.x = static_cast<const std::byte*>(io.x) + static_cast<std::size_t>(r0 * io.ld_x) * x_size;
    block.y = static_cast<std::byte*>(io.y) + static_cast<std::size_t>(r0 * io.ld_y) * y_size;
    kernel(block, std::min(kBlock, rows - r0), scale_.data(), offset_.data(), eps_, cols);
  }
}

}  // namespace cpufold
