#include "evoformer/msa_column_global_attention.h"

#include <algorithm>

#include "evoformer/msa_layout.h"
#include "memory/spill_window.h"
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
                                       const RunContext& ctx, const Transition* then) const {
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
  const Columns c = column_buffers(n_res).allocate(arena);
  const std::int64_t rows = detail::chunk_rows(n_seq, ctx.chunk);
  mean_pass(m, msa_mask, rows, c, arena);
  query_.forward(c.mean, c.q, arena);
  softmax_pass(m, msa_mask, rows, c, arena);
  update_pass(m, rows, c, ctx, then);
}

template <class F, class After>
void MsaColumnGlobalAttention::row_pass(const Tensor& m, std::int64_t rows,
                                        SpillWindow::Access access, Arena& arena, F f,
                                        After after) const {
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1);
  SpillWindow window(m, 0, rows, access, SpillWindow::kAlwaysStaged);
  for (std::int64_t s0 = 0; s0 < n_seq; s0 += rows) {
    const std::int64_t ns = std::min(rows, n_seq - s0);
    const Tensor m_rows = window.at(s0, s0 + ns);
    {
      ArenaScope step(arena);
      const Rows w = row_buffers(ns, n_res).allocate(arena);
      query_norm_.forward(m_rows, w.x);
      f(s0, ns, m_rows, w);
    }
    after(m_rows);
  }
  window.finish();
}

// AF2 Alg. 19 lines 1-2 (the query is the masked mean over sequences).
void MsaColumnGlobalAttention::mean_pass(const Tensor& m, const Tensor& msa_mask, std::int64_t rows,
                                         const Columns& c, Arena& arena) const {
  std::fill_n(c.mean.data_as<float>(), c.mean.numel(), 0.f);
  std::fill_n(c.count.data_as<float>(), c.count.numel(), 0.f);
  row_pass(m, rows, SpillWindow::Access::read, arena,
           [&](std::int64_t s0, std::int64_t ns, const Tensor&, const Rows& w) {
             masked_sum_fold(w.x.transpose(0, 1), msa_mask.slice(0, s0, s0 + ns).transpose(0, 1),
                             c.mean, c.count);
           });
  masked_mean_finish(c.mean, c.count);
}

// AF2 Alg. 19 lines 3-5: keys and values of each row block folded into the columns' softmax.
void MsaColumnGlobalAttention::softmax_pass(const Tensor& m, const Tensor& msa_mask,
                                            std::int64_t rows, const Columns& c,
                                            Arena& arena) const {
  const std::int64_t n_res = m.dim(1);
  const GlobalAttentionRunning running{c.max, c.sum, c.acc};
  global_attention_start(running);
  row_pass(m, rows, SpillWindow::Access::read, arena,
           [&](std::int64_t s0, std::int64_t ns, const Tensor&, const Rows& w) {
             kv_.forward(w.x, w.kv.reshape(Shape{ns, n_res, 2 * dims_.c_hidden}), arena);
             detail::mask_to_bias(msa_mask.slice(0, s0, s0 + ns).transpose(0, 1), kInf, w.bias);
             global_attention_fold(c.q, w.kv.select(2, 0).transpose(0, 1),
                                   w.kv.select(2, 1).transpose(0, 1), w.bias, running, arena);
           });
  global_attention_finish(running);
}

// AF2 Alg. 19 lines 6-7: g = sigmoid(x·Wg + bg) ⊙ the column's output, projected, added to m.
void MsaColumnGlobalAttention::update_pass(const Tensor& m, std::int64_t rows, const Columns& c,
                                           const RunContext& ctx, const Transition* then) const {
  Arena& arena = ctx.arena();
  const std::int64_t n_res = m.dim(1), hc = dims_.n_head * dims_.c_hidden;
  LinearEpilogue sigmoid;
  sigmoid.activation = Activation::sigmoid;
  const auto mul = detail::row_kernels().mul;
  const float* o = c.acc.data_as<float>();
  row_pass(
      m, rows, SpillWindow::Access::write, arena,
      [&](std::int64_t, std::int64_t ns, const Tensor& m_rows, const Rows& w) {
        gating_.forward(w.x, w.g, arena, sigmoid);
        float* gp = w.g.data_as<float>();
        const std::int64_t n = ns * n_res;
#pragma omp parallel for schedule(static) if (n * hc >= (1 << 14))
        for (std::int64_t r = 0; r < n; ++r) mul(gp + r * hc, o + r % n_res * hc, hc);
        output_.forward(w.g, w.x, arena);
        detail::add_rows(w.x, m_rows);
      },
      [&](const Tensor& m_rows) {
        // The same rows per step as the transition's own pass over m (ctx.chunk).
        if (then == nullptr) return;
        ctx.module("msa_transition");  // timed apart (bench block)
        then->forward(m_rows, Tensor(), ctx);
        ctx.module("msa_column_global_attention");
      });
}

BufferList<MsaColumnGlobalAttention::Columns> MsaColumnGlobalAttention::column_buffers(
    std::int64_t n_res) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  return {{&Columns::mean, DType::f32, Shape{n_res, c_e_}},
          {&Columns::count, DType::f32, Shape{n_res}},
          {&Columns::q, DType::f32, Shape{n_res, n_head, c}},
          {&Columns::max, DType::f32, Shape{n_res, n_head}},
          {&Columns::sum, DType::f32, Shape{n_res, n_head}},
          {&Columns::acc, DType::f32, Shape{n_res, n_head, c}}};
}

BufferList<MsaColumnGlobalAttention::Rows> MsaColumnGlobalAttention::row_buffers(
    std::int64_t ns, std::int64_t n_res) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  return {{&Rows::x, DType::f32, Shape{ns, n_res, c_e_}},
          {&Rows::kv, DType::f32, Shape{ns, n_res, 2, c}},
          {&Rows::bias, DType::f32, Shape{n_res, ns}},
          {&Rows::g, DType::f32, Shape{ns, n_res, n_head * c}}};
}

std::size_t MsaColumnGlobalAttention::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                    std::int64_t chunk, const Transition* then,
                                                    DType m_type) const {
  if (n_seq == 0 || n_res == 0) return 0;
  const EpilogueKind sigmoid{.activation = Activation::sigmoid};
  const std::int64_t rows = detail::chunk_rows(n_seq, chunk);
  const std::size_t steps = largest_step(n_seq, rows, [&](std::int64_t ns) {
    const std::int64_t n = ns * n_res;
    const std::size_t inner =
        std::max({kv_.scratch_bytes(n),
                  global_attention_fold_scratch_bytes(dims_.n_head, ns, dims_.c_hidden),
                  gating_.scratch_bytes(n, sigmoid), output_.scratch_bytes(n)});
    return row_buffers(ns, n_res).bytes() + inner;
  });
  const std::size_t transition =
      then != nullptr ? then->scratch_bytes(n_seq, n_res, chunk, false, m_type) : 0;
  return column_buffers(n_res).bytes() + std::max({query_.scratch_bytes(n_res), steps, transition});
}

std::size_t MsaColumnGlobalAttention::spill_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                         std::int64_t chunk, DType m_type) const {
  const std::size_t row = static_cast<std::size_t>(n_res * c_e_) * dtype_size(m_type);
  return SpillWindow::resident_bytes(1, n_seq, row, detail::chunk_rows(n_seq, chunk));
}

std::size_t MsaColumnGlobalAttention::spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                          DType m_type) const {
  return 4 * static_cast<std::size_t>(n_seq * n_res * c_e_) * dtype_size(m_type);
}

}  // namespace cpufold
