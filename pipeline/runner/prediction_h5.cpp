#include "pipeline/runner/prediction_h5.h"

#include <cstdint>

namespace cpufold {

std::vector<NamedOutput> prediction_tensors(const Prediction& p) {
  std::vector<NamedOutput> tensors = {
      {"msa", p.msa},
      {"msa_first_row", p.msa_first_row},
      {"pair", p.pair},
      {"single", p.single},
      {"final_atom_positions", p.final_atom_positions},
      {"final_atom14_positions", p.final_atom14_positions},
      {"final_atom_mask", p.final_atom_mask},
      {"final_affine_tensor", p.final_affine_tensor},
      {"final_rot_mats", p.final_rot_mats},
      {"final_trans", p.final_trans},
      {"lddt_logits", p.lddt_logits},
      {"plddt", p.plddt},
      {"distogram_logits", p.distogram_logits},
      {"masked_msa_logits", p.masked_msa_logits},
      {"experimentally_resolved_logits", p.experimentally_resolved_logits},
      {"sm/frames", p.sm.frames},
      {"sm/sidechain_frames", p.sm.sidechain_frames},
      {"sm/angles", p.sm.angles},
      {"sm/unnormalized_angles", p.sm.unnormalized_angles},
      {"sm/positions", p.sm.positions},
      {"sm/states", p.sm.states},
      {"sm/single", p.sm.single},
  };
  if (p.has_pae) {
    tensors.push_back({"tm_logits", p.tm_logits});
    tensors.push_back({"aligned_confidence_probs", p.aligned_confidence_probs});
    tensors.push_back({"predicted_aligned_error", p.predicted_aligned_error});
  }
  return tensors;
}

void write_prediction_outputs(Hdf5TensorWriter& out, const Prediction& p) {
  for (const NamedOutput& t : prediction_tensors(p)) out.write("outputs/" + t.name, t.tensor);
  if (p.has_pae) {
    float max_pae = p.max_predicted_aligned_error, ptm = p.ptm_score;
    out.write("outputs/max_predicted_aligned_error", Tensor(&max_pae, DType::f32, Shape{}));
    out.write("outputs/ptm_score", Tensor(&ptm, DType::f32, Shape{}));
  }
  // OpenFold's num_recycles counts every pass, the first included (the reference's too).
  std::int64_t num_recycles = p.iterations;
  out.write("outputs/num_recycles", Tensor(&num_recycles, DType::i64, Shape{}));
}

}  // namespace cpufold
