// AF2's input embedder (supplement Alg. 3): the initial MSA representation from msa_feat and
// target_feat, and the initial pair representation from target_feat and the relative position
// encoding (Alg. 4).
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/relative_position.h"
#include "memory/buffer_list.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 3
// m[s, i] = preprocess_msa(msa_feat[s, i]) + preprocess_1d(target_feat[i])
// z[i, j] = relpos(i, j) + left_single(target_feat[i]) + right_single(target_feat[j])
class InputEmbedder {
 public:
  // scope: `evoformer`, holding preprocess_1d [tf_dim, c_m], preprocess_msa [msa_dim, c_m],
  // left_single / right_single [tf_dim, c_z] and pair_activiations [2·max_relative + 1, c_z]
  // (ModelConfig: target_feat_dim 22, msa_feat_dim 49, max_relative_feature 32).
  InputEmbedder(const ParamScope& scope, std::int64_t tf_dim, std::int64_t msa_dim,
                std::int64_t c_m, std::int64_t c_z, std::int64_t max_relative);

  // target_feat: [n_res, tf_dim], msa_feat: [n_seq, n_res, msa_dim] -> m: [n_seq, n_res, c_m],
  // overwritten. m may be a row range of a bigger MSA buffer (e.g. the cluster rows before
  // the template rows).
  void embed_msa(const Tensor& target_feat, const Tensor& msa_feat, const Tensor& m,
                 const RunContext& ctx) const;

  // target_feat: [n_res, tf_dim], residue_index: [n_res] (i64 or i32)
  // -> z: [n_res, n_res, c_z], overwritten, or added to when `accumulate` (e.g. when z already
  // holds the recycling update, which saves a second pair-sized buffer).
  void embed_pair(const Tensor& target_feat, const Tensor& residue_index, const Tensor& z,
                  bool accumulate, const RunContext& ctx) const;

  // Both, overwriting m and z. Traces `input_embedder/call_k/out_0` (m) and `out_1` (z).
  void forward(const Tensor& target_feat, const Tensor& residue_index, const Tensor& msa_feat,
               const Tensor& m, const Tensor& z, const RunContext& ctx) const;

  // Scratch bytes any of the calls above takes (the Linears' scratch included).
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res) const;
  // The embedder's own buffers in embed_msa / embed_pair, without the Linears' scratch
  // (scratch_bytes() above is the total).
  static std::size_t msa_scratch_bytes(std::int64_t n_res, std::int64_t c_m);
  static std::size_t pair_scratch_bytes(std::int64_t n_res, std::int64_t c_z);

  std::int64_t c_m() const { return c_m_; }
  std::int64_t c_z() const { return c_z_; }

 private:
  // The buffers of embed_msa and embed_pair, each stated once in the list that both allocates
  // and sizes them.
  struct MsaBuffers {
    Tensor target;  // preprocess_1d(target_feat) [n_res, c_m], added to every MSA row
  };
  struct PairBuffers {
    Tensor residue_index;  // residue_index as contiguous i64 [n_res], when it is not already
    Tensor left;           // left_single(target_feat) [n_res, c_z]
    Tensor right;          // right_single(target_feat) [n_res, c_z]
  };
  static BufferList<MsaBuffers> msa_buffers(std::int64_t n_res, std::int64_t c_m);
  // copy_index: needs_index_copy(residue_index), always when sizing.
  static BufferList<PairBuffers> pair_buffers(std::int64_t n_res, std::int64_t c_z,
                                              bool copy_index);

  std::int64_t tf_dim_, msa_dim_, c_m_, c_z_;
  Linear preprocess_1d_, preprocess_msa_, left_single_, right_single_;
  RelativePositionEncoding relpos_;
};

}  // namespace cpufold
