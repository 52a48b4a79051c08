// One Evoformer block (AF2 Alg. 6) and one extra-MSA block (AF2 Alg. 18): MSA updates, the
// outer product mean into the pair, then the pair updates. Both update m and z in place.
#pragma once

#include <variant>

#include "evoformer/msa_column_attention.h"
#include "evoformer/msa_column_global_attention.h"
#include "evoformer/msa_row_attention_with_pair_bias.h"
#include "evoformer/outer_product_mean.h"
#include "evoformer/pair_stack_updates.h"
#include "io/model_config.h"

namespace cpufold {

// AF2 Alg. 6 (Evoformer block) and Alg. 18 (extra-MSA block: global column attention)
class EvoformerBlock {
 public:
  enum class Kind { evoformer, extra_msa };

  // Block `index` of the Evoformer stack (`evoformer/evoformer_iteration`) or the extra-MSA
  // stack (`evoformer/extra_msa_stack`) of the parameters at `root` (a WeightStore converts to
  // its root scope), its Linears from root's source.
  EvoformerBlock(const ParamScope& root, const ModelConfig& config, Kind kind, std::int64_t index);

  // m: [n_seq, n_res, c] (c_m, or c_e for the extra stack), z: [n_res, n_res, c_z];
  // msa_mask: [n_seq, n_res], pair_mask: [n_res, n_res]. m may be bf16 when the block computes
  // in bf16 (AF2 keeps its bf16 trunk's representations in bf16); z stays f32.
  void forward(const Tensor& m, const Tensor& z, const Tensor& msa_mask, const Tensor& pair_mask,
               const RunContext& ctx) const;
  // apart: ctx.activations is set (a spilled plan) and holds what apart_bytes counts, not
  // counted here.
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            DType m_type = DType::f32, bool apart = false) const;
  // The most forward() takes from ctx.activations when it is set, one module's at a time: a
  // triangle multiplication's right edge or the outer product mean's kept projections.
  std::size_t apart_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  // The most the staged passes over a spilled m (memory/spill_window.h) hold at once: a row
  // pass, the column attention's (a column pass; the global one's are row passes), the outer
  // product mean's.
  std::size_t spill_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                 DType m_type) const;
  // The most forward()'s staged passes over a spilled z hold at once: a row pass at the chunk,
  // or the outer product mean's.
  std::size_t pair_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  // Bytes forward() reads and writes from the spill tier when m and ctx.activations are
  // spilled (and z too with pair_spilled): each staged pass over m reads it once and a
  // changing one writes it once (memory/spill_window.h): row attention reads and writes m, the
  // column attention (with the transition in its pass) and the outer product mean move their
  // spill_traffic_bytes (the global column attention reads m three times); each
  // edge is written and read once. The pair's passes are an estimate: the bias and the outer
  // product mean stream it, the triangle updates and the transition page it (read and written once
  // each, six passes). The pair, when at most cache_bytes, is not streamed (FileTier::
  // set_cache_bytes): read once and written once, when the block after drops it; m is streamed
  // whatever the room (SpillWindow::kAlwaysStaged).
  std::size_t spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  DType m_type, bool pair_spilled, std::size_t cache_bytes) const;

 private:
  EvoformerBlock(const ParamScope& block, const ModelConfig& config, Kind kind);

  MsaRowAttentionWithPairBias row_attention_;
  std::variant<MsaColumnAttention, MsaColumnGlobalAttention> column_attention_;
  Transition msa_transition_;
  OuterProductMean outer_product_mean_;
  PairStackUpdates pair_updates_;
};

}  // namespace cpufold
