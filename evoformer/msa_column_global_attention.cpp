#include "evoformer/msa_column_global_attention.h"

#include <algorithm>

#include "evoformer/msa_layout.h"
#include "memory/spill_window.h"
#include "memory/strided_access.h"
#include "memory/tensor_copy.h"
#include "ops/concat_linear.h"
#include "ops/global_attention.h"
#include "ops/row_chunks.h"
#include "ops/row_kernels.h"
#include "ops/tensor_checks.h"

namespace cpufold {

MsaColumnGlobalAttention::MsaColumnGlobalAttention(const ParamScope& scope, std::int64_t c_e,
                                                   AttentionDims dims)
    : c_e_(c_e),
      dims_(dims),
      query_norm_((scope / "query_norm").layer_norm(c_e)),
      query_((scope / "attention").get("query_w", {c_e, dims.n_head, dims.c_hidden}), Tensor(), 1,
             scope.linear_source()),
      kv_(concat_linear({(scope / "attention").get("key_w", {c_e, dims.c_hidden}),
                         (scope / "attention").get("value_w", {c_e, dims.c_hidden})},
                        {}, scope.linear_source())),
      gating_((scope / "attention").get("gating_w", {c_e, dims.n_head, dims.c_hidden}),
              (scope / "attention").get("gating_b", {dims.n_head, dims.c_hidden}), 1,
              scope.linear_source()),
      output_((scope / "attention").get("output_w", {dims.n_head, dims.c_hidden, c_e}),
              (scope / "attention").get("output_b", {c_e}), 2, scope.linear_source()) {}

void MsaColumnGlobalAttention::forward(const Tensor& m, const Tensor& msa_mask,
                                       const RunContext& ctx) const {
  if (m.rank() != 3) {
    throw InternalError("MsaColumnGlobalAttention needs m [n_seq, n_res, c_e], got " +
                        m.describe());
  }
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1);
  detail::check_activation(m, Shape{n_seq, n_res, c_e_}, "MsaColumnGlobalAttention m");
  if (msa_mask.dtype() != DType::f32 || !(msa_mask.shape() == Shape{n_seq, n_res})) {
    throw InternalError("MsaColumnGlobalAttention msa_mask " + msa_mask.describe() +
                        " does not match m " + m.describe());
  }
  if (n_seq == 0 || n_res == 0) return;
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);

  // Per column: the mask over sequences [n_res, n_seq] and its key bias.
  const Tensor mask_t = arena.allocate(DType::f32, Shape{n_res, n_seq});
  copy_tensor(msa_mask.transpose(0, 1), mask_t);
  const Tensor mask_bias = arena.allocate(DType::f32, Shape{n_res, n_seq});
  detail::mask_to_bias(mask_t, kInf, mask_bias);

  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, ctx.chunk);
  const StridedAccess column_pass(m);
  SpillWindow window(m, 1, cols, SpillWindow::Access::write);
  for (std::int64_t j0 = 0; j0 < n_res; j0 += cols) {
    const std::int64_t nj = std::min(cols, n_res - j0);
    const Tensor columns = window.at(j0, j0 + nj);
    ArenaScope chunk_scope(arena);
    const Tensor x = arena.allocate(DType::f32, Shape{nj, n_seq, c_e_});
    detail::gather_columns(columns, 0, x);
    attend_columns(x, mask_t.slice(0, j0, j0 + nj), mask_bias.slice(0, j0, j0 + nj), arena);
    detail::add_columns(x, columns, 0);
  }
  window.finish();
}

void MsaColumnGlobalAttention::attend_columns(const Tensor& x, const Tensor& mask_t,
                                              const Tensor& mask_bias, Arena& arena) const {
  const std::int64_t nj = x.dim(0), n_seq = x.dim(1);
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden, hc = n_head * c;
  query_norm_.forward(x, x);

  // q[j] = query_w · masked mean of x[j] over sequences: [nj, n_head, c].
  const Tensor mean = arena.allocate(DType::f32, Shape{nj, c_e_});
  masked_mean(x, mask_t, mean);
  const Tensor q = arena.allocate(DType::f32, Shape{nj, n_head, c});
  query_.forward(mean, q, arena);
  // k, v: [nj, n_seq, c], one head shared by all query heads.
  const Tensor kv = arena.allocate(DType::f32, Shape{nj, n_seq, 2, c});
  kv_.forward(x, kv.reshape(Shape{nj, n_seq, 2 * c}), arena);
  const Tensor o = arena.allocate(DType::f32, Shape{nj, n_head, c});
  global_attention(q, kv.select(2, 0), kv.select(2, 1), mask_bias, o, arena);

  // g[j, s] = sigmoid(x[j, s]·Wg + bg) ⊙ o[j], the column's output broadcast over sequences.
  const Tensor g = arena.allocate(DType::f32, Shape{nj, n_seq, hc});
  LinearEpilogue sigmoid;
  sigmoid.activation = Activation::sigmoid;
  gating_.forward(x, g, arena, sigmoid);
  const auto mul = detail::row_kernels().mul;
  float* gp = g.data_as<float>();
  const float* opp = o.data_as<float>();
  const std::int64_t rows = nj * n_seq;
#pragma omp parallel for schedule(static) if (rows * hc >= (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) mul(gp + r * hc, opp + r / n_seq * hc, hc);

  // The update overwrites x.
  output_.forward(g, x, arena);
}

std::size_t MsaColumnGlobalAttention::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                    std::int64_t chunk) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, chunk);
  std::size_t step = 0;
  for (std::int64_t nj : {cols, n_res % cols}) {
    if (nj == 0) continue;
    const std::int64_t rows = nj * n_seq;
    const EpilogueKind sigmoid{.activation = Activation::sigmoid};
    const std::size_t inner =
        std::max({query_.scratch_bytes(nj), kv_.scratch_bytes(rows),
                  global_attention_scratch_bytes(n_head, n_seq),
                  gating_.scratch_bytes(rows, sigmoid), output_.scratch_bytes(rows)});
    step = std::max(step, f32_bytes(rows * c_e_) + f32_bytes(nj * c_e_) +
                              f32_bytes(nj * n_head * c) + f32_bytes(rows * 2 * c) +
                              f32_bytes(nj * n_head * c) + f32_bytes(rows * n_head * c) + inner);
  }
  return 2 * f32_bytes(n_res * n_seq) + step;
}

}  // namespace cpufold
