// ModelConfig: every dimension of an AlphaFold2 model, derived from the weight shapes in a
// parameter file rather than hard-coded, so reduced test models and the real presets load
// the same way.
#pragma once

#include <cstdint>
#include <string>

#include "io/weight_store.h"

namespace cpufold {

struct AttentionDims {
  std::int64_t n_head = 0;
  std::int64_t c_hidden = 0;  // per head
};

struct ModelConfig {
  // Preset family.
  bool templates = false;  // template embedding present (model_1/2)
  bool ptm_head = false;   // predicted aligned error / pTM head present (_ptm presets)

  // Representation widths.
  std::int64_t c_m = 0;  // MSA
  std::int64_t c_z = 0;  // pair
  std::int64_t c_s = 0;  // single
  std::int64_t c_e = 0;  // extra MSA
  std::int64_t c_t = 0;  // template pair (0 without templates)

  // Input features.
  std::int64_t target_feat_dim = 0;       // 22
  std::int64_t msa_feat_dim = 0;          // 49
  std::int64_t extra_msa_feat_dim = 0;    // 25
  std::int64_t max_relative_feature = 0;  // relpos clip (32); pair_activiations has 2k+1 rows
  std::int64_t recycle_pos_bins = 0;      // prev_pos_linear input bins (15)

  // Depths (repeated blocks stacked on axis 0 of the weights).
  std::int64_t n_evoformer_blocks = 0;
  std::int64_t n_extra_msa_blocks = 0;
  std::int64_t n_template_blocks = 0;
  std::int64_t n_structure_layers = 8;  // AF2: weights shared by all layers, count fixed

  // Evoformer stack.
  AttentionDims msa_row_attention, msa_column_attention, triangle_attention;
  std::int64_t c_hidden_opm = 0, c_hidden_tri_mul = 0;
  std::int64_t msa_transition_factor = 0, pair_transition_factor = 0;

  // Extra-MSA stack.
  AttentionDims extra_msa_row_attention, extra_msa_global_attention, extra_triangle_attention;
  std::int64_t extra_c_hidden_opm = 0, extra_c_hidden_tri_mul = 0;
  std::int64_t extra_msa_transition_factor = 0;

  // Templates (zero when absent).
  std::int64_t template_pair_feat_dim = 0;    // 88
  std::int64_t template_single_feat_dim = 0;  // 57
  AttentionDims template_triangle_attention, template_pointwise_attention;
  std::int64_t template_c_hidden_tri_mul = 0, template_pair_transition_factor = 0;

  // Structure module.
  std::int64_t c_ipa = 0, n_head_ipa = 0, n_qk_points = 0, n_v_points = 0, c_resnet = 0;
  std::int64_t n_torsions = 7;

  // Heads.
  std::int64_t lddt_bins = 0, distogram_bins = 0, pae_bins = 0, masked_msa_classes = 0;
  std::int64_t atom_types = 0;  // experimentally resolved head outputs (37)
  std::int64_t c_lddt_hidden = 0;

  std::int64_t parameter_count = 0;

  // Reads the dimensions from the shapes in `store`. Throws WeightsError naming the key when a
  // required parameter is missing or its shape is inconsistent.
  static ModelConfig from_weights(const WeightStore& store);

  // "model_1_ptm or model_2_ptm" style family name of the detected preset.
  std::string preset_family() const;
  // The AF2 preset a parameter file name states (params_model_3_ptm.npz -> "model_3_ptm") when it
  // agrees with the detected family, otherwise the family.
  std::string preset_for_file(const std::string& file_name) const;
  // Human-readable multi-line description for `cpufold info`.
  std::string describe() const;
};

}  // namespace cpufold
