#include "evoformer/triangle_attention.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "memory/strided_access.h"
#include "ops/attention.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

// Pairs per block when computing the triangle bias over all of z.
constexpr std::int64_t kBiasBlockRows = 4096;

std::int64_t slice_rows(std::int64_t n_res, std::int64_t chunk) {
  return chunk > 0 ? std::min(chunk, n_res) : n_res;
}

std::int64_t bias_block_residues(std::int64_t n_res) {
  return std::clamp<std::int64_t>(kBiasBlockRows / std::max<std::int64_t>(n_res, 1), 1, n_res);
}

// Mask bias over (batch row, key): starting node rows i, keys k: mask[i, k]; ending node
// batch columns j, keys k: mask[k, j].
void fill_mask_bias(const RowView& mr, std::int64_t n, bool starting, float inf,
                    const Tensor& mask_bias) {
  float* mb = mask_bias.data_as<float>();
#pragma omp parallel for schedule(static) if (n * n >= (1 << 14))
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t k = 0; k < n; ++k) {
      const float m = starting ? mr.data[b * mr.ld + k] : mr.data[k * mr.ld + b];
      mb[b * n + k] = inf * (m - 1.f);
    }
  }
}

}  // namespace

TriangleAttention::TriangleAttention(const ParamScope& scope, std::int64_t c_z,
                                     const AttentionDims& dims, Node node, float inf)
    : c_z_(c_z),
      n_head_(dims.n_head),
      node_(node),
      inf_(inf),
      query_norm_((scope / "query_norm").layer_norm(c_z)),
      triangle_bias_(scope.get("feat_2d_weights", {c_z, dims.n_head}), Tensor(), 1,
                     scope.with_precision(DType::f32).linear_source()),
      attention_(scope / "attention", c_z, dims, c_z) {}

// AF2 Alg. 13 (starting node) and 14 (ending node).
void TriangleAttention::forward(const Tensor& z, const Tensor& pair_mask,
                                const RunContext& ctx) const {
  const std::int64_t n = z.rank() == 3 ? z.dim(0) : -1;
  if (n < 0 || !(z.shape() == Shape{n, n, c_z_}) || !(pair_mask.shape() == Shape{n, n})) {
    throw InternalError("TriangleAttention: z " + z.describe() + " and pair_mask " +
                        pair_mask.describe() + " must be [n_res, n_res, " + std::to_string(c_z_) +
                        "] and [n_res, n_res]");
  }
  if (n == 0) return;
  const RowView zr = row_view(z, "TriangleAttention z");  // row (i, j) at zr.row(i·n + j)
  const RowView mr = row_view(pair_mask, "TriangleAttention pair_mask");
  const Tensor z_rows(zr.data, DType::f32, Shape{zr.rows, c_z_}, Shape{zr.ld, 1});
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);

  const Biases biases = bias_buffers(n).allocate(arena);
  fill_mask_bias(mr, n, node_ == Node::starting, inf_, biases.mask);
  triangle_bias(z_rows, n, biases.pair, arena);
  attend(z, zr, biases.pair, biases.mask, ctx.chunk, arena, ctx.gemm);
}

// Triangle bias [n_head, query, key] from the whole normed z, before any row is updated.
// Starting node: bias[h, j, k] = x[j, k]·w_h; ending node: bias[h, j, k] = x[k, j]·w_h.
void TriangleAttention::triangle_bias(const Tensor& z_rows, std::int64_t n, const Tensor& bias,
                                      Arena& arena) const {
  const bool starting = node_ == Node::starting;
  const std::int64_t n_head = n_head_;
  ArenaScope bias_scope(arena);
  const std::int64_t rows_i = bias_block_residues(n);
  const BiasBlock block = bias_block_buffers(n).allocate(arena);
  const Tensor &x = block.x, &tb = block.projected;
  float* const bd = bias.data_as<float>();
  const float* const tbd = tb.data_as<float>();
  for (std::int64_t i0 = 0; i0 < n; i0 += rows_i) {
    const std::int64_t ni = std::min(rows_i, n - i0);
    const Tensor xs = x.slice(0, 0, ni * n), ts = tb.slice(0, 0, ni * n);
    query_norm_.forward(z_rows.slice(0, i0 * n, (i0 + ni) * n), xs);
    triangle_bias_.forward(xs, ts, arena);
#pragma omp parallel for collapse(2) schedule(static) if (ni * n * n_head >= (1 << 14))
    for (std::int64_t h = 0; h < n_head; ++h) {
      for (std::int64_t i = 0; i < ni; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const float v = tbd[(i * n + j) * n_head + h];
          if (starting) {
            bd[(h * n + i0 + i) * n + j] = v;
          } else {
            bd[(h * n + j) * n + i0 + i] = v;
          }
        }
      }
    }
  }
}

// Gated attention over slices of `rows` batch rows (rows i for the starting node, columns j
// of z for the ending node), each updating its own part of z once done: a slice reads only
// its own rows (columns) of z, so the later slices still see the input.
void TriangleAttention::attend(const Tensor& z, const RowView& zr, const Tensor& bias,
                               const Tensor& mask_bias, std::int64_t chunk, Arena& arena,
                               GemmCache* gemm) const {
  const std::int64_t n = z.dim(0), c_z = c_z_;
  const auto& kern = detail::row_kernels();
  const std::int64_t rows = slice_rows(n, chunk);
  const Slice slice = slice_buffers(rows, n).allocate(arena);
  const Tensor &xc_all = slice.x, &xn_all = slice.xn;
  std::optional<StridedAccess> column_pass;  // the ending node reads columns of z
  if (node_ != Node::starting) column_pass.emplace(z);
  for (std::int64_t b0 = 0; b0 < n; b0 += rows) {
    const std::int64_t nb = std::min(rows, n - b0);
    const Tensor xc = xc_all.slice(0, 0, nb);  // x of the slice, [nb, n, c_z]
    AttentionBias ab;
    ab.pair = bias;
    ab.mask = mask_bias.slice(0, b0, b0 + nb);
    if (node_ == Node::starting) {
      const Tensor zs = z.slice(0, b0, b0 + nb);
      query_norm_.forward(zs, xc);
      attention_.forward(xc, ab, zs, /*accumulate=*/true, arena, gemm);
      continue;
    }
    // Ending node: xc[jj, k] = z[k, b0 + jj], the update lands in xc and is added back
    // transposed.
    float* const xcd = xc.data_as<float>();
#pragma omp parallel for collapse(2) schedule(static) if (nb * n * c_z >= (1 << 14))
    for (std::int64_t jj = 0; jj < nb; ++jj) {
      for (std::int64_t k = 0; k < n; ++k) {
        std::memcpy(xcd + (jj * n + k) * c_z, zr.row(k * n + b0 + jj),
                    static_cast<std::size_t>(c_z) * sizeof(float));
      }
    }
    const Tensor xn = xn_all.empty() ? xc : xn_all.slice(0, 0, nb);
    query_norm_.forward(xc, xn);
    attention_.forward(xn, ab, xc, /*accumulate=*/false, arena, gemm);
#pragma omp parallel for collapse(2) schedule(static) if (nb * n * c_z >= (1 << 14))
    for (std::int64_t jj = 0; jj < nb; ++jj) {
      for (std::int64_t k = 0; k < n; ++k) {
        kern.add(zr.row(k * n + b0 + jj), xcd + (jj * n + k) * c_z, c_z);
      }
    }
  }
}

BufferList<TriangleAttention::Biases> TriangleAttention::bias_buffers(std::int64_t n) const {
  return {{&Biases::mask, DType::f32, Shape{n, n}},
          {&Biases::pair, DType::f32, Shape{n_head_, n, n}}};
}

BufferList<TriangleAttention::BiasBlock> TriangleAttention::bias_block_buffers(
    std::int64_t n) const {
  const std::int64_t rows = bias_block_residues(n) * n;
  return {{&BiasBlock::x, DType::f32, Shape{rows, c_z_}},
          {&BiasBlock::projected, DType::f32, Shape{rows, n_head_}}};
}

// The starting node normalises z straight into the attention's input type; the ending node
// gathers columns into fp32 first (the update lands there) and, for bf16, normalises into a
// bf16 copy.
BufferList<TriangleAttention::Slice> TriangleAttention::slice_buffers(std::int64_t rows,
                                                                      std::int64_t n) const {
  const bool starting = node_ == Node::starting;
  const DType in_type = attention_.input_type();
  return BufferList<Slice>{{&Slice::x, starting ? in_type : DType::f32, Shape{rows, n, c_z_}}}
      .add_if(!starting && in_type == DType::bf16, {&Slice::xn, DType::bf16, Shape{rows, n, c_z_}});
}

std::size_t TriangleAttention::scratch_bytes(std::int64_t n_res, std::int64_t chunk) const {
  if (n_res == 0) return 0;
  const std::int64_t block = bias_block_residues(n_res);
  const std::size_t bias_pass =
      bias_block_buffers(n_res).bytes() + largest_step(n_res, block, [&](std::int64_t r) {
        return triangle_bias_.scratch_bytes(r * n_res);
      });
  const std::int64_t rows = slice_rows(n_res, chunk);
  const std::size_t slice_pass =
      slice_buffers(rows, n_res).bytes() + largest_step(n_res, rows, [&](std::int64_t r) {
        return attention_.scratch_bytes(r, n_res, /*accumulate=*/node_ == Node::starting);
      });
  return bias_buffers(n_res).bytes() + std::max(bias_pass, slice_pass);
}

}  // namespace cpufold
