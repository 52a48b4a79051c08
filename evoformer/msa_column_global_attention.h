// MSA column-wise gated global self-attention (AF2 supplement Alg. 19), the column attention of
// the extra-MSA stack: one query per residue column (the masked mean over sequences), a single
// key / value head shared by all query heads, and a per-sequence gate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/transition.h"
#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "memory/spill_window.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 19
class MsaColumnGlobalAttention {
 public:
  static constexpr float kInf = 1e9f;  // key mask bias inf * (mask - 1), config extra_msa.inf

  // scope: `evoformer/extra_msa_stack/msa_column_global_attention` with its block index; holds
  // query_norm [c_e] and attention/ with query_w [c_e, n_head, c_hidden] (no bias), key_w and
  // value_w [c_e, c_hidden] (no bias, fused here), gating_w [c_e, n_head, c_hidden] + gating_b
  // [n_head, c_hidden], output_w [n_head, c_hidden, c_e] + output_b [c_e].
  MsaColumnGlobalAttention(const ParamScope& scope, std::int64_t c_e, AttentionDims dims);

  // m: [n_seq, n_res, c_e] (unit-stride rows), f32 or bf16 (the sum rounded once); updated in
  // place: m += GlobalAttention(m). msa_mask: [n_seq, n_res] f32 (any strides): weights of the
  // query mean and key mask bias. The query mean divides by (mask count + 1e-10) as AF2's
  // mask_mean does; OpenFold (the reference) adds its config eps (1e-8) instead. Both round to
  // the same float unless a column is fully masked.
  // Three passes over the rows of m, detail::chunk_rows(n_seq, ctx.chunk) sequences at a time,
  // so a spilled m streams row slabs as the other MSA passes do instead of gathering columns of
  // a page per sequence: (1) the masked mean of the normalised rows per column, hence the
  // queries; (2) keys and values per row block, folded into a running softmax per column and
  // head; (3) the gate per row times its column's output, projected and added to m, then, with
  // `then` (the block's MSA transition, Alg. 9, which works on each MSA entry alone), the
  // updated rows through it: a spilled m is read and written once for both modules.
  void forward(const Tensor& m, const Tensor& msa_mask, const RunContext& ctx,
               const Transition* then = nullptr) const;

  // Scratch bytes forward() takes from ctx.arena() (with `then` as forward's, m of m_type).
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            const Transition* then = nullptr, DType m_type = DType::f32) const;
  // The most forward()'s passes over a spilled m hold at once (memory/spill_window.h).
  std::size_t spill_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                 DType m_type) const;
  // Bytes forward() moves from and to a spilled m: three reads and a write.
  std::size_t spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res, DType m_type) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them: the
  // per-column state held throughout and the buffers of a block of ns sequences.
  struct Columns {
    Tensor mean;   // the masked sum of the normalised rows per column [n_res, c_e], then the mean
    Tensor count;  // the mask's sum per column [n_res]
    Tensor q;      // the mean's query projection [n_res, n_head, c]
    Tensor max, sum, acc;  // the running softmax (GlobalAttentionRunning); acc ends as the output
  };
  struct Rows {
    Tensor x;     // the block's rows normalised [ns, n_res, c_e]; the update overwrites them
    Tensor kv;    // keys and values, one head shared by all query heads [ns, n_res, 2, c]
    Tensor bias;  // the key mask bias per column [n_res, ns]
    Tensor g;     // the gated output per row [ns, n_res, n_head·c]
  };
  BufferList<Columns> column_buffers(std::int64_t n_res) const;
  BufferList<Rows> row_buffers(std::int64_t ns, std::int64_t n_res) const;

  // Each block of `rows` sequences of m through a staged pass of `access`: f(s0, ns, m_rows, w)
  // with w the block's buffers, w.x = LayerNorm(m_rows); then after(m_rows), those buffers
  // released.
  struct NothingAfter {
    void operator()(const Tensor&) const {}
  };
  template <class F, class After = NothingAfter>
  void row_pass(const Tensor& m, std::int64_t rows, SpillWindow::Access access, Arena& arena, F f,
                After after = {}) const;
  // The passes (see forward), `rows` sequences per step.
  void mean_pass(const Tensor& m, const Tensor& msa_mask, std::int64_t rows, const Columns& c,
                 Arena& arena) const;
  void softmax_pass(const Tensor& m, const Tensor& msa_mask, std::int64_t rows, const Columns& c,
                    Arena& arena) const;
  void update_pass(const Tensor& m, std::int64_t rows, const Columns& c, const RunContext& ctx,
                   const Transition* then) const;

  std::int64_t c_e_;
  AttentionDims dims_;
  LayerNorm query_norm_;
  Linear query_;   // [c_e] -> [n_head, c_hidden], applied to the masked mean
  Linear kv_;      // [c_e] -> [2, c_hidden]: key then value
  Linear gating_;  // [c_e] -> [n_head, c_hidden], sigmoid
  Linear output_;  // [n_head, c_hidden] -> [c_e]
};

}  // namespace cpufold
