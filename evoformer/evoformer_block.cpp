#include "evoformer/evoformer_block.h"

#include <algorithm>

#include "memory/spill_window.h"
#include "ops/row_chunks.h"

namespace cpufold {
namespace {

ParamScope block_scope(const ParamScope& root, const ModelConfig& c, EvoformerBlock::Kind kind,
                       std::int64_t index) {
  if (kind == EvoformerBlock::Kind::evoformer) {
    return root.at("evoformer/evoformer_iteration", index, c.n_evoformer_blocks);
  }
  return root.at("evoformer/extra_msa_stack", index, c.n_extra_msa_blocks);
}

std::variant<MsaColumnAttention, MsaColumnGlobalAttention> make_column_attention(
    const ParamScope& block, const ModelConfig& c, EvoformerBlock::Kind kind) {
  if (kind == EvoformerBlock::Kind::evoformer) {
    return std::variant<MsaColumnAttention, MsaColumnGlobalAttention>(
        std::in_place_type<MsaColumnAttention>, block / "msa_column_attention", c.c_m,
        c.msa_column_attention);
  }
  return std::variant<MsaColumnAttention, MsaColumnGlobalAttention>(
      std::in_place_type<MsaColumnGlobalAttention>, block / "msa_column_global_attention", c.c_e,
      c.extra_msa_global_attention);
}

}  // namespace

EvoformerBlock::EvoformerBlock(const ParamScope& root, const ModelConfig& c, Kind kind,
                               std::int64_t index)
    : EvoformerBlock(block_scope(root, c, kind, index), c, kind) {}

EvoformerBlock::EvoformerBlock(const ParamScope& block, const ModelConfig& c, Kind kind)
    : row_attention_(block / "msa_row_attention_with_pair_bias",
                     kind == Kind::evoformer ? c.c_m : c.c_e, c.c_z,
                     kind == Kind::evoformer ? c.msa_row_attention : c.extra_msa_row_attention),
      column_attention_(make_column_attention(block, c, kind)),
      msa_transition_(
          block / "msa_transition", kind == Kind::evoformer ? c.c_m : c.c_e,
          kind == Kind::evoformer ? c.msa_transition_factor : c.extra_msa_transition_factor),
      outer_product_mean_(block / "outer_product_mean", kind == Kind::evoformer ? c.c_m : c.c_e,
                          c.c_z, kind == Kind::evoformer ? c.c_hidden_opm : c.extra_c_hidden_opm),
      pair_updates_(block, c.c_z,
                    kind == Kind::evoformer ? c.triangle_attention : c.extra_triangle_attention,
                    kind == Kind::evoformer ? c.c_hidden_tri_mul : c.extra_c_hidden_tri_mul,
                    c.pair_transition_factor) {}

void EvoformerBlock::forward(const Tensor& m, const Tensor& z, const Tensor& msa_mask,
                             const Tensor& pair_mask, const RunContext& ctx) const {
  ctx.module("msa_row_attention");
  row_attention_.forward(m, z, msa_mask, ctx);
  ctx.module(std::holds_alternative<MsaColumnAttention>(column_attention_)
                 ? "msa_column_attention"
                 : "msa_column_global_attention");
  // The MSA transition runs inside the column attention's pass, on each slab it updated (one
  // pass over a spilled m instead of two); the reference runs with _mask_trans off: the
  // transition sees no mask (see Transition).
  std::visit([&](const auto& column) { column.forward(m, msa_mask, ctx, &msa_transition_); },
             column_attention_);
  ctx.module("outer_product_mean");
  outer_product_mean_.forward(m, msa_mask, z, ctx);
  pair_updates_.forward(z, pair_mask, ctx);
  ctx.module("");
}

std::size_t EvoformerBlock::spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                std::int64_t chunk, DType m_type, bool pair_spilled,
                                                std::size_t cache_bytes) const {
  const std::size_t msa =
      static_cast<std::size_t>(n_seq * n_res * row_attention_.c_m()) * dtype_size(m_type);
  const std::size_t opm =
      outer_product_mean_.spill_traffic_bytes(n_seq, n_res, chunk, m_type, cache_bytes);
  const std::size_t pair = f32_bytes({n_res, n_res, row_attention_.c_z()});
  const std::size_t column =
      std::visit([&](const auto& col) { return col.spill_traffic_bytes(n_seq, n_res, m_type); },
                 column_attention_);
  // Row attention reads and writes m once; the transition runs in the column attention's pass.
  // m is streamed whatever the room to cache it (SpillWindow::kAlwaysStaged).
  const std::size_t msa_traffic = 2 * msa + column + opm;
  const std::size_t pair_traffic = pair <= cache_bytes ? 2 * pair : pair * (1 + 2 + 2 * 6);
  return msa_traffic + 2 * pair_updates_.edge_bytes(n_res) + (pair_spilled ? pair_traffic : 0);
}

std::size_t EvoformerBlock::apart_bytes(std::int64_t n_seq, std::int64_t n_res,
                                        std::int64_t chunk) const {
  return std::max(pair_updates_.edge_bytes(n_res),
                  outer_product_mean_.apart_bytes(n_seq, n_res, chunk));
}

std::size_t EvoformerBlock::spill_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                               std::int64_t chunk, DType m_type) const {
  const std::size_t index = static_cast<std::size_t>(row_attention_.c_m()) * dtype_size(m_type);
  const std::size_t rows = SpillWindow::resident_bytes(
      1, n_seq, static_cast<std::size_t>(n_res) * index, detail::chunk_rows(n_seq, chunk));
  const std::size_t columns = std::visit(
      [&](const auto& col) { return col.spill_window_bytes(n_seq, n_res, chunk, m_type); },
      column_attention_);
  return std::max(
      {rows, columns, outer_product_mean_.spill_window_bytes(n_seq, n_res, chunk, m_type)});
}

std::size_t EvoformerBlock::pair_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                              std::int64_t chunk) const {
  const std::size_t row = f32_bytes({n_res, row_attention_.c_z()});
  return std::max(SpillWindow::resident_bytes(1, n_res, row, detail::chunk_rows(n_res, chunk)),
                  outer_product_mean_.pair_window_bytes(n_seq, n_res, chunk));
}

std::size_t EvoformerBlock::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                          std::int64_t chunk, DType m_type, bool apart) const {
  const std::size_t column = std::visit(
      [&](const auto& col) {
        return col.scratch_bytes(n_seq, n_res, chunk, &msa_transition_, m_type);
      },
      column_attention_);
  return std::max({row_attention_.scratch_bytes(n_seq, n_res, chunk, m_type), column,
                   outer_product_mean_.scratch_bytes(n_seq, n_res, chunk, apart),
                   pair_updates_.scratch_bytes(n_res, chunk, apart)});
}

}  // namespace cpufold
