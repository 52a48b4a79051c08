#include "evoformer/msa_column_attention.h"

#include <algorithm>

#include "evoformer/msa_layout.h"
#include "memory/spill_window.h"
#include "memory/strided_access.h"
#include "ops/row_chunks.h"
#include "ops/tensor_checks.h"

namespace cpufold {

MsaColumnAttention::MsaColumnAttention(const ParamScope& scope, std::int64_t c_m,
                                       AttentionDims dims)
    : c_m_(c_m),
      query_norm_((scope / "query_norm").layer_norm(c_m)),
      attention_(scope / "attention", c_m, dims, c_m) {}

void MsaColumnAttention::forward(const Tensor& m, const Tensor& msa_mask, const RunContext& ctx,
                                 const Transition* then) const {
  if (m.rank() != 3) {
    throw InternalError("MsaColumnAttention needs m [n_seq, n_res, c_m], got " + m.describe());
  }
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1);
  detail::check_f32(m, Shape{n_seq, n_res, c_m_}, "MsaColumnAttention m");
  if (msa_mask.dtype() != DType::f32 || !(msa_mask.shape() == Shape{n_seq, n_res})) {
    throw InternalError("MsaColumnAttention msa_mask " + msa_mask.describe() +
                        " does not match m " + m.describe());
  }
  if (n_seq == 0 || n_res == 0) return;
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);

  // Column j's keys are the sequences: bias [n_res, n_seq].
  const Tensor mask_bias = mask_bias_buffers(n_seq, n_res).allocate(arena).bias;
  detail::mask_to_bias(msa_mask.transpose(0, 1), kInf, mask_bias);

  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, ctx.chunk);
  // The columns' rows (about ctx.chunk·n_res, as a transition step over rows) in one step.
  RunContext whole = ctx;
  whole.chunk = 0;
  const StridedAccess column_pass(m);
  SpillWindow window(m, 1, cols, SpillWindow::Access::write, SpillWindow::kAlwaysStaged,
                     SpillWindow::Sharing::alone);
  for (std::int64_t j0 = 0; j0 < n_res; j0 += cols) {
    const std::int64_t nj = std::min(cols, n_res - j0);
    const Tensor columns = window.at(j0, j0 + nj);
    ArenaScope chunk_scope(arena);
    const ColumnChunk buf = column_chunk_buffers(nj, n_seq).allocate(arena);
    const Tensor& x = buf.x;
    detail::gather_columns(columns, 0, x);
    // The update overwrites x (no longer needed once the output projection runs); a bf16
    // attention reads its own normalised copy.
    const Tensor& xn = buf.xn.empty() ? x : buf.xn;
    query_norm_.forward(x, xn);
    attention_.forward(xn, AttentionBias{Tensor(), mask_bias.slice(0, j0, j0 + nj)}, x,
                       /*accumulate=*/false, arena, ctx.gemm);
    if (then == nullptr) {
      detail::add_columns(x, columns, 0);
      continue;
    }
    // x becomes the updated columns (the same sums as add_columns makes), goes through the
    // transition and replaces them.
    detail::gather_add_columns(columns, 0, x);
    ctx.module("msa_transition");  // timed apart (bench block)
    then->forward(x, Tensor(), whole);
    ctx.module("msa_column_attention");
    detail::set_columns(x, columns, 0);
  }
  window.finish();
}

BufferList<MsaColumnAttention::MaskBias> MsaColumnAttention::mask_bias_buffers(
    std::int64_t n_seq, std::int64_t n_res) const {
  return {{&MaskBias::bias, DType::f32, Shape{n_res, n_seq}}};
}

BufferList<MsaColumnAttention::ColumnChunk> MsaColumnAttention::column_chunk_buffers(
    std::int64_t nj, std::int64_t n_seq) const {
  return BufferList<ColumnChunk>{{&ColumnChunk::x, DType::f32, Shape{nj, n_seq, c_m_}}}.add_if(
      attention_.input_type() != DType::f32,
      {&ColumnChunk::xn, DType::bf16, Shape{nj, n_seq, c_m_}});
}

std::size_t MsaColumnAttention::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                              std::int64_t chunk, const Transition* then,
                                              DType /*m_type*/) const {
  if (n_seq == 0 || n_res == 0) return 0;
  const std::int64_t cols = detail::chunk_columns(n_res, n_seq, chunk);
  return mask_bias_buffers(n_seq, n_res).bytes() + largest_step(n_res, cols, [&](std::int64_t nj) {
           return column_chunk_buffers(nj, n_seq).bytes() +
                  std::max(attention_.scratch_bytes(nj, n_seq, /*accumulate=*/false),
                           then != nullptr ? then->scratch_bytes(nj, n_seq, 0, false) : 0);
         });
}

std::size_t MsaColumnAttention::spill_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                   std::int64_t chunk, DType m_type) const {
  return SpillWindow::resident_bytes(n_seq, n_res,
                                     static_cast<std::size_t>(c_m_) * dtype_size(m_type),
                                     detail::chunk_columns(n_res, n_seq, chunk));
}

std::size_t MsaColumnAttention::spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                    DType m_type) const {
  return 2 * static_cast<std::size_t>(n_seq * n_res * c_m_) * dtype_size(m_type);
}

}  // namespace cpufold
