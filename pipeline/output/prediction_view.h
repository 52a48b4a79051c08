// What the output files show of one prediction: views of the model's outputs and the residues
// they describe. The writers take this, not the runner's Prediction, so output/ needs neither
// the model nor the feature pipeline.
#pragma once

#include <cstdint>
#include <span>

#include "memory/tensor.h"

namespace cpufold {

struct PredictionView {
  std::span<const std::int32_t> aatype;         // [n_res] AF2 restype order, 20 = X (UNK)
  std::span<const std::int32_t> residue_index;  // [n_res] 0-based
  Tensor atom_positions;                        // f32 [n_res, 37, 3] Å (final_atom_positions)
  Tensor atom_mask;                             // f32 [n_res, 37] (final_atom_mask)
  Tensor plddt;                                 // f32 [n_res] 0-100
  bool has_pae = false;                         // the model has the PAE / pTM head
  Tensor pae;                                   // f32 [n_res, n_res] Å (predicted_aligned_error)
  float max_pae = 0;                            // max_predicted_aligned_error
  float ptm = 0;                                // ptm_score
};

}  // namespace cpufold
