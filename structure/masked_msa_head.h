// The masked-MSA head: logits over the residue classes for every cluster-MSA entry (the BERT
// objective's prediction; at inference an auxiliary output).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Sec. 1.9.9
class MaskedMsaHead {
 public:
  // scope: `masked_msa_head`, holding logits [c_m, n_classes] + bias. AF2: n_classes 23
  // (ModelConfig masked_msa_classes).
  MaskedMsaHead(const ParamScope& scope, std::int64_t c_m, std::int64_t n_classes);

  // msa: [n_seq, n_res, c_m], the Evoformer MSA output restricted to the cluster rows (AF2's
  // representations['msa'] drops the template torsion rows) -> logits: [n_seq, n_res,
  // n_classes] = Linear(msa).
  void forward(const Tensor& msa, const Tensor& logits, const RunContext& ctx) const;

  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res) const;

  std::int64_t n_classes() const { return n_classes_; }

 private:
  std::int64_t c_m_, n_classes_;
  Linear logits_;  // [c_m] -> [n_classes]
};

}  // namespace cpufold
