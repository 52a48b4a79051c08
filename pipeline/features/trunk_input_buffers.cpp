#include "pipeline/features/trunk_input_buffers.h"

#include "pipeline/features/msa_feat.h"
#include "structure/residue_constants.h"

namespace cpufold {

BufferList<TrunkInputs> trunk_input_buffers(std::int64_t n, std::int64_t n_seq,
                                            std::int64_t n_extra) {
  using I = TrunkInputs;
  return {{&I::aatype, DType::i64, Shape{n}},
          {&I::residue_index, DType::i64, Shape{n}},
          {&I::seq_mask, DType::f32, Shape{n}},
          {&I::target_feat, DType::f32, Shape{n, kTargetFeatChannels}},
          {&I::msa_feat, DType::f32, Shape{n_seq, n, kMsaFeatChannels}},
          {&I::msa_mask, DType::f32, Shape{n_seq, n}},
          {&I::extra_msa, DType::i64, Shape{n_extra, n}},
          {&I::extra_has_deletion, DType::f32, Shape{n_extra, n}},
          {&I::extra_deletion_value, DType::f32, Shape{n_extra, n}},
          {&I::extra_msa_mask, DType::f32, Shape{n_extra, n}}};
}

BufferList<TrunkInputs> template_input_buffers(std::int64_t t, std::int64_t n) {
  using I = TrunkInputs;
  return {{&I::template_aatype, DType::i64, Shape{t, n}},
          {&I::template_all_atom_positions, DType::f32, Shape{t, n, kNumAtom37, 3}},
          {&I::template_all_atom_mask, DType::f32, Shape{t, n, kNumAtom37}},
          {&I::template_mask, DType::f32, Shape{t}},
          {&I::template_pseudo_beta, DType::f32, Shape{t, n, 3}},
          {&I::template_pseudo_beta_mask, DType::f32, Shape{t, n}},
          {&I::template_torsion_angles_sin_cos, DType::f32, Shape{t, n, kNumTorsions, 2}},
          {&I::template_alt_torsion_angles_sin_cos, DType::f32, Shape{t, n, kNumTorsions, 2}},
          {&I::template_torsion_angles_mask, DType::f32, Shape{t, n, kNumTorsions}}};
}

}  // namespace cpufold
