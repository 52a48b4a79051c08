// AF2's template torsion-angle (single) embedding (supplement Alg. 2, template angle
// features): one extra MSA row per template, appended after the cluster rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/trunk_inputs.h"
#include "memory/buffer_list.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 2 (template angle embedding)
// f = one_hot(template_aatype, 22) ‖ torsion_angles_sin_cos (7·2) ‖
//     alt_torsion_angles_sin_cos (7·2) ‖ torsion_angles_mask (7)         (57 channels)
// m_t = template_projection(relu(template_single_embedding(f)))
// The rows' MSA mask is torsion_angles_mask[..., 2] (torsions are ordered ω, φ, ψ, χ1..χ4:
// the ψ mask).
class TemplateSingleEmbedding {
 public:
  // scope: `evoformer` (template_single_embedding [c_in, c_m], template_projection [c_m, c_m]).
  TemplateSingleEmbedding(const ParamScope& scope, std::int64_t c_in, std::int64_t c_m);

  // From in.template_aatype [n_templ, n_res], template_torsion_angles_sin_cos and
  // template_alt_torsion_angles_sin_cos [n_templ, n_res, 7, 2], template_torsion_angles_mask
  // [n_templ, n_res, 7] -> m: [n_templ, n_res, c_m] (overwritten; may be the template rows of
  // the MSA buffer) and, if not empty, msa_mask: [n_templ, n_res] (the rows' MSA mask).
  // Throws InputError for a template_aatype outside [0, 22). Scratch: scratch_bytes(...).
  void forward(const TrunkInputs& in, const Tensor& m, const Tensor& msa_mask,
               const RunContext& ctx) const;

  std::size_t scratch_bytes(std::int64_t n_templ, std::int64_t n_res) const;

 private:
  // forward()'s buffers, stated once in the list that both allocates and sizes them.
  struct Buffers {
    Tensor aatype;  // template_aatype as contiguous i64 [n_templ, n_res], when it is not already
    Tensor feat;    // the angle features [n_templ, n_res, c_in]
    Tensor hidden;  // relu(template_single_embedding(feat)) [n_templ, n_res, c_m]
  };
  // copy_aatype: needs_index_copy(template_aatype), always when sizing.
  BufferList<Buffers> buffers(std::int64_t n_templ, std::int64_t n_res, bool copy_aatype) const;

  std::int64_t c_in_, c_m_;
  Linear embedding_;   // template_single_embedding, relu fused
  Linear projection_;  // template_projection
};

}  // namespace cpufold
