#include "pipeline/runner/synthetic_features.h"

#include <cmath>
#include <numbers>
#include <random>

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
  TrunkInputs in;
  in.aatype = arena.allocate(DType::i64, {n});
  f.integers(in.aatype, kResidueTypes);
  in.residue_index = arena.allocate(DType::i64, {n});
  for (std::int64_t i = 0; i < n; ++i) in.residue_index.data_as<std::int64_t>()[i] = i;
  in.seq_mask = arena.allocate(DType::f32, {n});
  Filler::constant(in.seq_mask, 1);
  in.target_feat = arena.allocate(DType::f32, {n, kTargetFeat});
  Filler::constant(in.target_feat, 0);
  for (std::int64_t i = 0; i < n; ++i)
    in.target_feat.data_as<float>()[i * kTargetFeat + 1 + in.aatype.data_as<std::int64_t>()[i]] = 1;
  in.msa_feat = arena.allocate(DType::f32, {m, n, kMsaFeat});
  fill_msa_feat(f, in.msa_feat);
  in.msa_mask = arena.allocate(DType::f32, {m, n});
  Filler::constant(in.msa_mask, 1);
  in.extra_msa = arena.allocate(DType::i64, {e, n});
  f.integers(in.extra_msa, kExtraClasses);
  in.extra_has_deletion = arena.allocate(DType::f32, {e, n});
  in.extra_deletion_value = arena.allocate(DType::f32, {e, n});
  for (std::int64_t i = 0; i < e * n; ++i) {
    in.extra_has_deletion.data_as<float>()[i] = f.uniform() < 0.1f ? 1.f : 0.f;
    in.extra_deletion_value.data_as<float>()[i] = f.uniform();
  }
  in.extra_msa_mask = arena.allocate(DType::f32, {e, n});
  Filler::constant(in.extra_msa_mask, 1);
  if (t == 0) return in;

  in.template_aatype = arena.allocate(DType::i64, {t, n});
  f.integers(in.template_aatype, kResidueTypes + 1);
  in.template_all_atom_positions = arena.allocate(DType::f32, {t, n, kAtoms, 3});
  auto* atoms = in.template_all_atom_positions.data_as<float>();
  for (std::int64_t i = 0; i < t * n * kAtoms * 3; ++i) atoms[i] = f.normal(10);
  in.template_all_atom_mask = arena.allocate(DType::f32, {t, n, kAtoms});
  Filler::constant(in.template_all_atom_mask, 1);
  in.template_mask = arena.allocate(DType::f32, {t});
  Filler::constant(in.template_mask, 1);
  in.template_pseudo_beta = arena.allocate(DType::f32, {t, n, 3});
  for (std::int64_t i = 0; i < t * n; ++i) {
    for (int x = 0; x < 3; ++x)  // CB (atom37 index 3)
      in.template_pseudo_beta.data_as<float>()[i * 3 + x] = atoms[(i * kAtoms + 3) * 3 + x];
  }
  in.template_pseudo_beta_mask = arena.allocate(DType::f32, {t, n});
  Filler::constant(in.template_pseudo_beta_mask, 1);
  in.template_torsion_angles_sin_cos = arena.allocate(DType::f32, {t, n, kTorsions, 2});
  in.template_alt_torsion_angles_sin_cos = arena.allocate(DType::f32, {t, n, kTorsions, 2});
  for (std::int64_t i = 0; i < t * n * kTorsions; ++i) {
    const float angle = (2 * f.uniform() - 1) * std::numbers::pi_v<float>;
    for (const Tensor* x :
         {&in.template_torsion_angles_sin_cos, &in.template_alt_torsion_angles_sin_cos}) {
      x->data_as<float>()[2 * i] = std::sin(angle);
      x->data_as<float>()[2 * i + 1] = std::cos(angle);
    }
  }
  in.template_torsion_angles_mask = arena.allocate(DType::f32, {t, n, kTorsions});
  Filler::constant(in.template_torsion_angles_mask, 1);
  return in;
}

std::size_t inputs_bytes(const SyntheticSizes& s) {
  const std::int64_t n = s.n_res, m = s.msa_rows, e = s.extra_rows, t = s.templates;
  const auto i64 = [](std::int64_t count) {
    return align_up(static_cast<std::size_t>(count) * sizeof(std::int64_t));
  };
  std::size_t bytes = 2 * i64(n) + f32_bytes(n) + f32_bytes(n * kTargetFeat) +
                      f32_bytes(m * n * kMsaFeat) + f32_bytes(m * n) + i64(e * n) +
                      3 * f32_bytes(e * n);
  if (t > 0) {
    bytes += i64(t * n) + f32_bytes(t * n * kAtoms * 3) + f32_bytes(t * n * kAtoms) + f32_bytes(t) +
             f32_bytes(t * n * 3) + f32_bytes(t * n) + 2 * f32_bytes(t * n * kTorsions * 2) +
             f32_bytes(t * n * kTorsions);
  }
  return bytes;
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
