#include "pipeline/runner/synthetic_features.h"

#include <cmath>
#include <numbers>
#include <random>

#include "pipeline/features/trunk_input_buffers.h"

namespace cpufold {
namespace {

// AF2's feature widths.
constexpr std::int64_t kTargetFeat = 22, kMsaFeat = 49, kMsaClasses = 23, kAtoms = 37;
constexpr std::int64_t kTorsions = 7, kResidueTypes = 20, kExtraClasses = 23;

struct Filler {
  std::mt19937 rng;

  std::int64_t integer(std::int64_t below) {
    return std::uniform_int_distribution<std::int64_t>(0, below - 1)(rng);
  }
  float uniform() { return std::uniform_real_distribution<float>(0.f, 1.f)(rng); }
  float normal(float sd) { return std::normal_distribution<float>(0.f, sd)(rng); }

  void integers(const Tensor& t, std::int64_t below) {
    auto* p = t.data_as<std::int64_t>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = integer(below);
  }
  static void constant(const Tensor& t, float v) {
    auto* p = t.data_as<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = v;
  }
};

// msa_feat: one-hot residue (23), has_deletion, deletion_value, cluster profile (23, summing to
// 1), cluster deletion mean.
void fill_msa_feat(Filler& f, const Tensor& msa_feat) {
  float* p = msa_feat.data_as<float>();
  const std::int64_t rows = msa_feat.numel() / kMsaFeat;
  for (std::int64_t r = 0; r < rows; ++r, p += kMsaFeat) {
    std::fill(p, p + kMsaFeat, 0.f);
    p[f.integer(kMsaClasses - 2)] = 1;
    float sum = 0;
    for (std::int64_t c = 0; c < kMsaClasses; ++c) sum += p[25 + c] = f.uniform();
    for (std::int64_t c = 0; c < kMsaClasses; ++c) p[25 + c] /= sum;
  }
}

TrunkInputs make_inputs(const SyntheticSizes& s, std::uint32_t seed, Arena& arena) {
  Filler f{std::mt19937(seed)};
  const std::int64_t n = s.n_res, m = s.msa_rows, e = s.extra_rows, t = s.templates;
  TrunkInputs in = trunk_input_buffers(n, m, e).allocate(arena);
  f.integers(in.aatype, kResidueTypes);
  for (std::int64_t i = 0; i < n; ++i) in.residue_index.data_as<std::int64_t>()[i] = i;
  Filler::constant(in.seq_mask, 1);
  Filler::constant(in.target_feat, 0);
  for (std::int64_t i = 0; i < n; ++i)
    in.target_feat.data_as<float>()[i * kTargetFeat + 1 + in.aatype.data_as<std::int64_t>()[i]] = 1;
  fill_msa_feat(f, in.msa_feat);
  Filler::constant(in.msa_mask, 1);
  f.integers(in.extra_msa, kExtraClasses);
  for (std::int64_t i = 0; i < e * n; ++i) {
    in.extra_has_deletion.data_as<float>()[i] = f.uniform() < 0.1f ? 1.f : 0.f;
    in.extra_deletion_value.data_as<float>()[i] = f.uniform();
  }
  Filler::constant(in.extra_msa_mask, 1);
  if (t == 0) return in;

  template_input_buffers(t, n).allocate_into(arena, in);
  f.integers(in.template_aatype, kResidueTypes + 1);
  auto* atoms = in.template_all_atom_positions.data_as<float>();
  for (std::int64_t i = 0; i < t * n * kAtoms * 3; ++i) atoms[i] = f.normal(10);
  Filler::constant(in.template_all_atom_mask, 1);
  Filler::constant(in.template_mask, 1);
  for (std::int64_t i = 0; i < t * n; ++i) {
    for (int x = 0; x < 3; ++x)  // CB (atom37 index 3)
      in.template_pseudo_beta.data_as<float>()[i * 3 + x] = atoms[(i * kAtoms + 3) * 3 + x];
  }
  Filler::constant(in.template_pseudo_beta_mask, 1);
  for (std::int64_t i = 0; i < t * n * kTorsions; ++i) {
    const float angle = (2 * f.uniform() - 1) * std::numbers::pi_v<float>;
    for (const Tensor* x :
         {&in.template_torsion_angles_sin_cos, &in.template_alt_torsion_angles_sin_cos}) {
      x->data_as<float>()[2 * i] = std::sin(angle);
      x->data_as<float>()[2 * i + 1] = std::cos(angle);
    }
  }
  Filler::constant(in.template_torsion_angles_mask, 1);
  return in;
}

std::size_t inputs_bytes(const SyntheticSizes& s) {
  return trunk_input_buffers(s.n_res, s.msa_rows, s.extra_rows).bytes() +
         (s.templates > 0 ? template_input_buffers(s.templates, s.n_res).bytes() : 0);
}

}  // namespace

FeatureSource synthetic_feature_source(const SyntheticSizes& sizes, std::uint32_t seed) {
  if (sizes.n_res < 1 || sizes.msa_rows < 1 || sizes.extra_rows < 1 || sizes.templates < 0 ||
      sizes.iterations < 1) {
    throw InputError(
        "synthetic features need at least one residue, MSA row, extra row and "
        "iteration, and no negative template count");
  }
  FeatureSource source;
  source.iterations = sizes.iterations;
  source.bytes_per_iteration = inputs_bytes(sizes);
  source.read = [sizes, seed](std::int64_t k, Arena& arena) {
    return make_inputs(sizes, seed + static_cast<std::uint32_t>(k), arena);
  };
  return source;
}

}  // namespace cpufold
