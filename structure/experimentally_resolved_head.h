// The experimentally-resolved head: per-residue, per-atom37 logits that the atom would be
// resolved in an experimental structure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Sec. 1.9.10
class ExperimentallyResolvedHead {
 public:
  // scope: `experimentally_resolved_head`, holding logits [c_s, n_atoms] + bias. AF2: n_atoms
  // 37 (ModelConfig atom_types).
  ExperimentallyResolvedHead(const ParamScope& scope, std::int64_t c_s, std::int64_t n_atoms);

  // single: [n_res, c_s], the Evoformer's single output (AF2's representations['single'],
  // OpenFold's outputs['single'], the structure module's input, not its final single)
  // -> logits: [n_res, n_atoms] = Linear(single).
  void forward(const Tensor& single, const Tensor& logits, const RunContext& ctx) const;

  std::size_t scratch_bytes(std::int64_t n_res) const;

  std::int64_t n_atoms() const { return n_atoms_; }

 private:
  std::int64_t c_s_, n_atoms_;
  Linear logits_;  // [c_s] -> [n_atoms]
};

}  // namespace cpufold
