#include "pipeline/prediction_h5.h"

#include <cstdint>
#include <utility>

namespace cpufold {

void write_prediction_outputs(Hdf5TensorWriter& out, const Prediction& p) {
  const std::pair<const char*, const Tensor*> datasets[] = {
      {"msa", &p.msa},
      {"msa_first_row", &p.msa_first_row},
      {"pair", &p.pair},
      {"single", &p.single},
      {"final_atom_positions", &p.final_atom_positions},
      {"final_atom14_positions", &p.final_atom14_positions},
      {"final_atom_mask", &p.final_atom_mask},
      {"final_affine_tensor", &p.final_affine_tensor},
      {"final_rot_mats", &p.final_rot_mats},
      {"final_trans", &p.final_trans},
      {"lddt_logits", &p.lddt_logits},
      {"plddt", &p.plddt},
      {"distogram_logits", &p.distogram_logits},
      {"masked_msa_logits", &p.masked_msa_logits},
      {"experimentally_resolved_logits", &p.experimentally_resolved_logits},
      {"sm/frames", &p.sm.frames},
      {"sm/sidechain_frames", &p.sm.sidechain_frames},
      {"sm/angles", &p.sm.angles},
      {"sm/unnormalized_angles", &p.sm.unnormalized_angles},
      {"sm/positions", &p.sm.positions},
      {"sm/states", &p.sm.states},
      {"sm/single", &p.sm.single},
  };
  for (const auto& [name, tensor] : datasets) out.write(std::string("outputs/") + name, *tensor);
  if (p.has_pae) {
    out.write("outputs/tm_logits", p.tm_logits);
    out.write("outputs/aligned_confidence_probs", p.aligned_confidence_probs);
    out.write("outputs/predicted_aligned_error", p.predicted_aligned_error);
    float max_pae = p.max_predicted_aligned_error, ptm = p.ptm_score;
    out.write("outputs/max_predicted_aligned_error", Tensor(&max_pae, DType::f32, Shape{}));
    out.write("outputs/ptm_score", Tensor(&ptm, DType::f32, Shape{}));
  }
  // OpenFold's num_recycles counts every pass, the first included (the reference's too).
  std::int64_t num_recycles = p.iterations;
  out.write("outputs/num_recycles", Tensor(&num_recycles, DType::i64, Shape{}));
}

}  // namespace cpufold
