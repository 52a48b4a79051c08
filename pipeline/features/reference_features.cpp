#include "pipeline/features/reference_features.h"

#include <algorithm>

#include "io/feature_file.h"

namespace cpufold {
namespace {

struct FeatureSpec {
  const char* name;
  DType dtype;
  Tensor TrunkInputs::*field;
  bool template_feature;
};

constexpr FeatureSpec kFeatures[] = {
    {"aatype", DType::i64, &TrunkInputs::aatype, false},
    {"residue_index", DType::i64, &TrunkInputs::residue_index, false},
    {"seq_mask", DType::f32, &TrunkInputs::seq_mask, false},
    {"target_feat", DType::f32, &TrunkInputs::target_feat, false},
    {"msa_feat", DType::f32, &TrunkInputs::msa_feat, false},
    {"msa_mask", DType::f32, &TrunkInputs::msa_mask, false},
    {"extra_msa", DType::i64, &TrunkInputs::extra_msa, false},
    {"extra_has_deletion", DType::f32, &TrunkInputs::extra_has_deletion, false},
    {"extra_deletion_value", DType::f32, &TrunkInputs::extra_deletion_value, false},
    {"extra_msa_mask", DType::f32, &TrunkInputs::extra_msa_mask, false},
    {"template_aatype", DType::i64, &TrunkInputs::template_aatype, true},
    {"template_all_atom_positions", DType::f32, &TrunkInputs::template_all_atom_positions, true},
    {"template_all_atom_mask", DType::f32, &TrunkInputs::template_all_atom_mask, true},
    {"template_mask", DType::f32, &TrunkInputs::template_mask, true},
    {"template_pseudo_beta", DType::f32, &TrunkInputs::template_pseudo_beta, true},
    {"template_pseudo_beta_mask", DType::f32, &TrunkInputs::template_pseudo_beta_mask, true},
    {"template_torsion_angles_sin_cos", DType::f32, &TrunkInputs::template_torsion_angles_sin_cos,
     true},
    {"template_alt_torsion_angles_sin_cos", DType::f32,
     &TrunkInputs::template_alt_torsion_angles_sin_cos, true},
    {"template_torsion_angles_mask", DType::f32, &TrunkInputs::template_torsion_angles_mask, true},
};

bool wanted(const Hdf5TensorReader& file, const FeatureSpec& f, bool templates) {
  return !f.template_feature || (templates && file.has(std::string("inputs/") + f.name));
}

void check_dim(const Hdf5TensorReader& file, const char* name, const Tensor& t, int axis,
               std::int64_t want, const char* what) {
  if (t.dim(axis) != want) {
    throw InputError("inputs/" + std::string(name) + " in " + file.path().string() + " has " +
                     what + " = " + std::to_string(t.dim(axis)) + " on axis " +
                     std::to_string(axis) + ", but inputs/aatype says " + std::to_string(want));
  }
}

}  // namespace

TrunkInputs read_trunk_inputs(const Hdf5TensorReader& file, std::int64_t iteration, bool templates,
                              Arena& arena) {
  TrunkInputs in;
  for (const FeatureSpec& f : kFeatures) {
    if (wanted(file, f, templates))
      in.*f.field = read_feature(file, f.name, iteration, f.dtype, arena);
  }
  const std::int64_t n = in.n_res();
  check_dim(file, "target_feat", in.target_feat, 0, n, "n_res");
  check_dim(file, "msa_feat", in.msa_feat, 1, n, "n_res");
  check_dim(file, "extra_msa", in.extra_msa, 1, n, "n_res");
  if (!in.template_aatype.empty())
    check_dim(file, "template_aatype", in.template_aatype, 1, n, "n_res");
  return in;
}

std::size_t trunk_inputs_bytes(const Hdf5TensorReader& file, bool templates) {
  std::size_t bytes = 0;
  for (const FeatureSpec& f : kFeatures) {
    if (!wanted(file, f, templates)) continue;
    const Shape s = file.shape(std::string("inputs/") + f.name);
    const auto per_iteration = static_cast<std::size_t>(s.numel()) /
                               static_cast<std::size_t>(std::max<std::int64_t>(s[s.rank() - 1], 1));
    bytes += align_up(per_iteration * dtype_size(f.dtype));
  }
  return bytes;
}

}  // namespace cpufold
