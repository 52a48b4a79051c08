// process_templates against the reference: the raw template hits of raw_features/ turned into
// every template_* input the reference fed its model (inputs/, iteration 0).
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "io/feature_file.h"
#include "io/hdf5_tensor_file.h"
#include "memory/tier.h"
#include "pipeline/features/template_features.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold {
namespace {

RawTemplates read_raw_templates(const Hdf5TensorReader& file) {
  RawTemplates raw;
  const Shape s = file.shape("raw_features/template_aatype");  // [T, N, 22]
  raw.n_templ = s[0];
  raw.n_res = s[1];
  raw.aatype_one_hot = file.read_f32("raw_features/template_aatype");
  raw.all_atom_positions = file.read_f32("raw_features/template_all_atom_positions");
  raw.all_atom_mask = file.read_f32("raw_features/template_all_atom_mask");
  raw.sum_probs = file.read_f32("raw_features/template_sum_probs");  // [T, 1]
  return raw;
}

class TemplateFeaturesParity : public ::testing::TestWithParam<testing::ReferenceCase> {};

TEST_P(TemplateFeaturesParity, RawTemplatesGiveTheReferenceInputs) {
  const testing::ResolvedCase c = testing::resolve(GetParam());
  if (c.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR unset";
  ASSERT_FALSE(c.reference.empty());
  const Hdf5TensorReader file(c.reference);
  const RawTemplates raw = read_raw_templates(file);
  ASSERT_GT(raw.n_templ, 0);

  const std::size_t bytes = template_inputs_bytes(raw.n_templ, raw.n_res);
  Arena arena("templates", dram_tier(), bytes);
  TrunkInputs in;
  process_templates(raw, in, arena);
  EXPECT_EQ(arena.used(), bytes) << "template_inputs_bytes disagrees with what was taken";
  EXPECT_EQ(in.n_templ(), raw.n_templ);

  struct Field {
    const char* name;
    const Tensor* ours;
    testing::Tolerance tol;
  };
  const Field fields[] = {
      {"template_aatype", &in.template_aatype, testing::kExactTolerance},
      {"template_mask", &in.template_mask, testing::kExactTolerance},
      {"template_all_atom_positions", &in.template_all_atom_positions, testing::kExactTolerance},
      {"template_all_atom_mask", &in.template_all_atom_mask, testing::kExactTolerance},
      {"template_pseudo_beta", &in.template_pseudo_beta, testing::kExactTolerance},
      {"template_pseudo_beta_mask", &in.template_pseudo_beta_mask, testing::kExactTolerance},
      {"template_torsion_angles_mask", &in.template_torsion_angles_mask, testing::kExactTolerance},
      {"template_torsion_angles_sin_cos", &in.template_torsion_angles_sin_cos,
       testing::kTemplateTorsionTolerance},
      {"template_alt_torsion_angles_sin_cos", &in.template_alt_torsion_angles_sin_cos,
       testing::kTemplateTorsionTolerance},
  };
  for (const Field& f : fields) {
    const Shape shape = file.shape(std::string("inputs/") + f.name);
    Arena ref_arena("reference", dram_tier(),
                    align_up(static_cast<std::size_t>(shape.numel()) * sizeof(float)));
    const Tensor ref = read_feature(file, f.name, 0, DType::f32, ref_arena);
    const std::vector<float> want(ref.data_as<float>(), ref.data_as<float>() + ref.numel());
    const auto result = testing::matches_reference(f.name, *f.ours, want, ref.shape(), f.tol);
    EXPECT_TRUE(result);
    std::cout << result.message() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, TemplateFeaturesParity,
                         ::testing::ValuesIn(testing::with_templates(testing::all_cases())),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace cpufold
