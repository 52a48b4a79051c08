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
  const Masks masks = mask_buffers(n_seq, n_res).allocate(arena);
  copy_tensor(msa_mask.transpose(0, 1), masks.mask);
  detail::mask_to_bias(masks.mask, kInf, masks.bias);

  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, ctx.chunk);
  const StridedAccess column_pass(m);
  SpillWindow window(m, 1, cols, SpillWindow::Access::write);
  for (std::int64_t j0 = 0; j0 < n_res; j0 += cols) {
    const std::int64_t nj = std::min(cols, n_res - j0);
    const Tensor columns = window.at(j0, j0 + nj);
    ArenaScope chunk_scope(arena);
    const Columns w = column_buffers(nj, n_seq).allocate(arena);
    detail::gather_columns(columns, 0, w.x);
    attend_columns(w, masks.mask.slice(0, j0, j0 + nj), masks.bias.slice(0, j0, j0 + nj), arena);
    detail::add_columns(w.x, columns, 0);
  }
  window.finish();
}

void MsaColumnGlobalAttention::attend_columns(const Columns& w, const Tensor& mask_t,
                                              const Tensor& mask_bias, Arena& arena) const {
  const Tensor& x = w.x;
  const std::int64_t nj = x.dim(0), n_seq = x.dim(1), hc = dims_.n_head * dims_.c_hidden;
  query_norm_.forward(x, x);

  // q[j] = query_w · masked mean of x[j] over sequences: [nj, n_head, c].
  masked_mean(x, mask_t, w.mean);
  query_.forward(w.mean, w.q, arena);
  // k, v: [nj, n_seq, c], one head shared by all query heads.
  kv_.forward(x, w.kv.reshape(Shape{nj, n_seq, 2 * dims_.c_hidden}), arena);
  global_attention(w.q, w.kv.select(2, 0), w.kv.select(2, 1), mask_bias, w.o, arena);

  // g[j, s] = sigmoid(x[j, s]·Wg + bg) ⊙ o[j], the column's output broadcast over sequences.
  LinearEpilogue sigmoid;
  sigmoid.activation = Activation::sigmoid;
  gating_.forward(x, w.g, arena, sigmoid);
  const auto mul = detail::row_kernels().mul;
  float* gp = w.g.data_as<float>();
  const float* opp = w.o.data_as<float>();
  const std::int64_t rows = nj * n_seq;
#pragma omp parallel for schedule(static) if (rows * hc >= (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) mul(gp + r * hc, opp + r / n_seq * hc, hc);

  // The update overwrites x.
  output_.forward(w.g, x, arena);
}

BufferList<MsaColumnGlobalAttention::Masks> MsaColumnGlobalAttention::mask_buffers(
    std::int64_t n_seq, std::int64_t n_res) const {
  return {{&Masks::mask, DType::f32, Shape{n_res, n_seq}},
          {&Masks::bias, DType::f32, Shape{n_res, n_seq}}};
}

BufferList<MsaColumnGlobalAttention::Columns> MsaColumnGlobalAttention::column_buffers(
    std::int64_t nj, std::int64_t n_seq) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  return {{&Columns::x, DType::f32, Shape{nj, n_seq, c_e_}},
          {&Columns::mean, DType::f32, Shape{nj, c_e_}},
          {&Columns::q, DType::f32, Shape{nj, n_head, c}},
          {&Columns::kv, DType::f32, Shape{nj, n_seq, 2, c}},
          {&Columns::o, DType::f32, Shape{nj, n_head, c}},
          {&Columns::g, DType::f32, Shape{nj, n_seq, n_head * c}}};
}

std::size_t MsaColumnGlobalAttention::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                    std::int64_t chunk) const {
  if (n_seq == 0 || n_res == 0) return 0;
  const EpilogueKind sigmoid{.activation = Activation::sigmoid};
  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, chunk);
  return mask_buffers(n_seq, n_res).bytes() + largest_step(n_res, cols, [&](std::int64_t nj) {
           const std::int64_t rows = nj * n_seq;
           const std::size_t inner =
               std::max({query_.scratch_bytes(nj), kv_.scratch_bytes(rows),
                         global_attention_scratch_bytes(dims_.n_head, n_seq),
                         gating_.scratch_bytes(rows, sigmoid), output_.scratch_bytes(rows)});
           return column_buffers(nj, n_seq).bytes() + inner;
         });
}

}  // namespace cpufold
