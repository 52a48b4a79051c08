// The processed AF2 batch for one recycling iteration, as the trunk consumes it. Views over
// memory the caller owns; shapes follow AF2's feature names.
#pragma once

#include <initializer_list>

#include "memory/tensor.h"

namespace cpufold {

struct TrunkInputs {
  Tensor aatype;                // i64 [n_res]
  Tensor residue_index;         // i64 [n_res]
  Tensor seq_mask;              // f32 [n_res]
  Tensor target_feat;           // f32 [n_res, 22]
  Tensor msa_feat;              // f32 [n_seq, n_res, 49]
  Tensor msa_mask;              // f32 [n_seq, n_res]
  Tensor extra_msa;             // i64 [n_extra, n_res]
  Tensor extra_has_deletion;    // f32 [n_extra, n_res]
  Tensor extra_deletion_value;  // f32 [n_extra, n_res]
  Tensor extra_msa_mask;        // f32 [n_extra, n_res]
  // Templates (empty tensors when the model has no template embedding).
  Tensor template_aatype;                      // i64 [n_templ, n_res]
  Tensor template_all_atom_positions;          // f32 [n_templ, n_res, 37, 3]
  Tensor template_all_atom_mask;               // f32 [n_templ, n_res, 37]
  Tensor template_mask;                        // f32 [n_templ]
  Tensor template_pseudo_beta;                 // f32 [n_templ, n_res, 3]
  Tensor template_pseudo_beta_mask;            // f32 [n_templ, n_res]
  Tensor template_torsion_angles_sin_cos;      // f32 [n_templ, n_res, 7, 2]
  Tensor template_alt_torsion_angles_sin_cos;  // f32 [n_templ, n_res, 7, 2]
  Tensor template_torsion_angles_mask;         // f32 [n_templ, n_res, 7]

  std::int64_t n_res() const { return aatype.dim(0); }
  std::int64_t n_seq() const { return msa_feat.dim(0); }
  std::int64_t n_extra() const { return extra_msa.dim(0); }
  std::int64_t n_templ() const { return template_aatype.empty() ? 0 : template_aatype.dim(0); }

  // Calls f(Tensor&) on every tensor (or every template tensor), in declaration order, for code
  // that treats them alike (hashing a sample, padding rows).
  template <typename F>
  void for_each_tensor(F&& f) {
    for (Tensor* t : {&aatype, &residue_index, &seq_mask, &target_feat, &msa_feat, &msa_mask,
                      &extra_msa, &extra_has_deletion, &extra_deletion_value, &extra_msa_mask})
      f(*t);
    for_each_template_tensor(f);
  }
  template <typename F>
  void for_each_template_tensor(F&& f) {
    for (Tensor* t :
         {&template_aatype, &template_all_atom_positions, &template_all_atom_mask, &template_mask,
          &template_pseudo_beta, &template_pseudo_beta_mask, &template_torsion_angles_sin_cos,
          &template_alt_torsion_angles_sin_cos, &template_torsion_angles_mask})
      f(*t);
  }
};

}  // namespace cpufold
