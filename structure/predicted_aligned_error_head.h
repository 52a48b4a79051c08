// The predicted-aligned-error head of the pTM models: aligned-error bin logits for every
// (frame, residue) pair, with the PAE matrix and the pTM score they imply.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"
#include "structure/confidence.h"

namespace cpufold {

// The scalar outputs of the PAE head.
struct AlignedErrorScores {
  float max_predicted_aligned_error = 0.f;  // Å, the last bin centre (31.75 for AF2)
  float ptm = 0.f;                          // predicted TM-score in [0, 1]
};

// AF2 Sec. 1.9.7
class PredictedAlignedErrorHead {
 public:
  // scope: `predicted_aligned_error_head`, holding logits [c_z, n_bins] + bias. AF2: n_bins 64
  // (ModelConfig pae_bins), max_bin 31 Å.
  PredictedAlignedErrorHead(const ParamScope& scope, std::int64_t c_z, std::int64_t n_bins,
                            float max_bin = kPaeMaxBin);

  // pair: [n_res, n_res, c_z], the Evoformer pair output;
  // residue_weights: [n_res] f32 for pTM (the sequence mask), or empty for all ones;
  // logits: [n_res, n_res, n_bins] <- Linear(pair) (no symmetrisation; OpenFold's tm_logits);
  // probs: [n_res, n_res, n_bins] <- softmax(logits) (aligned_confidence_probs), or empty to
  //   use scratch;
  // pae: [n_res, n_res] <- expected aligned error (predicted_aligned_error).
  // Returns max_predicted_aligned_error and pTM (compute_ptm over probs).
  AlignedErrorScores forward(const Tensor& pair, const Tensor& residue_weights,
                             const Tensor& logits, const Tensor& probs, const Tensor& pae,
                             const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues, with or without caller-provided probs.
  std::size_t scratch_bytes(std::int64_t n_res, bool probs_given) const;

  std::int64_t n_bins() const { return n_bins_; }
  float max_bin() const { return max_bin_; }

 private:
  struct Buffers {
    Tensor probs;  // when the caller gives none: the softmax of the logits [n, n, n_bins]
  };
  BufferList<Buffers> buffers(std::int64_t n, bool probs_given) const;

  std::int64_t c_z_, n_bins_;
  float max_bin_;
  Linear logits_;  // [c_z] -> [n_bins]
};

}  // namespace cpufold
