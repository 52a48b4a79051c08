#include "evoformer/msa_row_attention_with_pair_bias.h"

#include <algorithm>

#include "evoformer/msa_layout.h"
#include "memory/spill_window.h"
#include "ops/row_chunks.h"
#include "ops/tensor_checks.h"

namespace cpufold {

MsaRowAttentionWithPairBias::MsaRowAttentionWithPairBias(const ParamScope& scope, std::int64_t c_m,
                                                         std::int64_t c_z, AttentionDims dims)
    : c_m_(c_m),
      c_z_(c_z),
      dims_(dims),
      query_norm_((scope / "query_norm").layer_norm(c_m)),
      feat_2d_norm_((scope / "feat_2d_norm").layer_norm(c_z)),
      feat_2d_(scope.get("feat_2d_weights", {c_z, dims.n_head}), Tensor(), 1,
               scope.with_precision(DType::f32).linear_source()),
      attention_(scope / "attention", c_m, dims, c_m) {}

void MsaRowAttentionWithPairBias::forward(const Tensor& m, const Tensor& z, const Tensor& msa_mask,
                                          const RunContext& ctx) const {
  if (m.rank() != 3 || z.rank() != 3) {
    throw InternalError(
        "MsaRowAttentionWithPairBias needs m [n_seq, n_res, c_m] and z [n_res, "
        "n_res, c_z], got " +
        m.describe() + " and " + z.describe());
  }
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1), n_head = dims_.n_head;
  detail::check_activation(m, Shape{n_seq, n_res, c_m_}, "MsaRowAttentionWithPairBias m");
  detail::check_f32(z, Shape{n_res, n_res, c_z_}, "MsaRowAttentionWithPairBias z");
  if (msa_mask.dtype() != DType::f32 || !(msa_mask.shape() == Shape{n_seq, n_res})) {
    throw InternalError("MsaRowAttentionWithPairBias msa_mask " + msa_mask.describe() +
                        " does not match m " + m.describe());
  }
  if (n_seq == 0 || n_res == 0) return;
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);

  // Pair bias [n_head, n_res, n_res] = LayerNorm(z)·feat_2d_weights, head axis first.
  const Tensor pair_bias = pair_bias_buffers(n_res).allocate(arena).bias;
  float* pb = pair_bias.data_as<float>();
  const std::int64_t z_rows = detail::chunk_rows(n_res, ctx.chunk);
  SpillWindow z_window(z, 0, z_rows, SpillWindow::Access::read);
  for (std::int64_t i0 = 0; i0 < n_res; i0 += z_rows) {
    const std::int64_t ni = std::min(z_rows, n_res - i0);
    ArenaScope chunk_scope(arena);
    const PairBlock block = pair_block_buffers(ni, n_res).allocate(arena);
    feat_2d_norm_.forward(z_window.at(i0, i0 + ni), block.normed);
    feat_2d_.forward(block.normed, block.projected, arena);
    const float* pp = block.projected.data_as<float>();
#pragma omp parallel for schedule(static) if (ni * n_res * n_head >= (1 << 14))
    for (std::int64_t i = 0; i < ni; ++i) {
      for (std::int64_t h = 0; h < n_head; ++h) {
        float* dst = pb + (h * n_res + i0 + i) * n_res;
        const float* src = pp + i * n_res * n_head + h;
        for (std::int64_t j = 0; j < n_res; ++j) dst[j] = src[j * n_head];
      }
    }
  }

  const Tensor mask_bias = mask_bias_buffers(n_seq, n_res).allocate(arena).bias;
  detail::mask_to_bias(msa_mask, kInf, mask_bias);

  const std::int64_t rows = detail::chunk_rows(n_seq, ctx.chunk);
  SpillWindow window(m, 0, rows, SpillWindow::Access::write, SpillWindow::kAlwaysStaged);
  for (std::int64_t s0 = 0; s0 < n_seq; s0 += rows) {
    const std::int64_t ns = std::min(rows, n_seq - s0);
    ArenaScope chunk_scope(arena);
    const Tensor m_rows = window.at(s0, s0 + ns);
    const Tensor x = row_chunk_buffers(ns, n_res).allocate(arena).x;
    query_norm_.forward(m_rows, x);
    attention_.forward(x, AttentionBias{pair_bias, mask_bias.slice(0, s0, s0 + ns)}, m_rows,
                       /*accumulate=*/true, arena, ctx.gemm);
  }
  window.finish();
}

BufferList<MsaRowAttentionWithPairBias::PairBias> MsaRowAttentionWithPairBias::pair_bias_buffers(
    std::int64_t n_res) const {
  return {{&PairBias::bias, DType::f32, Shape{dims_.n_head, n_res, n_res}}};
}

BufferList<MsaRowAttentionWithPairBias::PairBlock> MsaRowAttentionWithPairBias::pair_block_buffers(
    std::int64_t ni, std::int64_t n_res) const {
  return {{&PairBlock::normed, DType::f32, Shape{ni, n_res, c_z_}},
          {&PairBlock::projected, DType::f32, Shape{ni, n_res, dims_.n_head}}};
}

BufferList<MsaRowAttentionWithPairBias::MaskBias> MsaRowAttentionWithPairBias::mask_bias_buffers(
    std::int64_t n_seq, std::int64_t n_res) const {
  return {{&MaskBias::bias, DType::f32, Shape{n_seq, n_res}}};
}

BufferList<MsaRowAttentionWithPairBias::RowChunk> MsaRowAttentionWithPairBias::row_chunk_buffers(
    std::int64_t ns, std::int64_t n_res) const {
  return {{&RowChunk::x, attention_.input_type(), Shape{ns, n_res, c_m_}}};
}

std::size_t MsaRowAttentionWithPairBias::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                       std::int64_t chunk, DType m_type) const {
  if (n_seq == 0 || n_res == 0) return 0;
  // The first and the last (remainder) chunk may plan different primitives.
  const std::size_t pair_pass =
      largest_step(n_res, detail::chunk_rows(n_res, chunk), [&](std::int64_t ni) {
        return pair_block_buffers(ni, n_res).bytes() + feat_2d_.scratch_bytes(ni * n_res);
      });
  const std::size_t msa_pass =
      mask_bias_buffers(n_seq, n_res).bytes() +
      largest_step(n_seq, detail::chunk_rows(n_seq, chunk), [&](std::int64_t ns) {
        return row_chunk_buffers(ns, n_res).bytes() +
               attention_.scratch_bytes(ns, n_res, /*accumulate=*/true, m_type);
      });
  // The pair bias lives throughout; the pair-bias step releases its buffers before the mask
  // bias and the MSA rows take theirs.
  return pair_bias_buffers(n_res).bytes() + std::max(pair_pass, msa_pass);
}

}  // namespace cpufold
