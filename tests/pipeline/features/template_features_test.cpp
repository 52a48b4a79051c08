// process_templates on hand-made templates: the HHblits -> AF2 residue order, glycine's
// pseudo-beta, the gap token, no templates at all, and malformed input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/error.h"
#include "memory/tier.h"
#include "pipeline/features/template_features.h"
#include "structure/residue_constants.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// One template over `n_res` residues with the given HHblits ids; every residue has N, CA, C,
// CB and O at distinct positions.
RawTemplates one_template(const std::vector<int>& hhblits_ids) {
  RawTemplates raw;
  raw.n_templ = 1;
  raw.n_res = static_cast<std::int64_t>(hhblits_ids.size());
  raw.aatype_one_hot.assign(static_cast<std::size_t>(raw.n_res * 22), 0.f);
  raw.all_atom_positions.assign(static_cast<std::size_t>(raw.n_res * 37 * 3), 0.f);
  raw.all_atom_mask.assign(static_cast<std::size_t>(raw.n_res * 37), 0.f);
  raw.sum_probs = {0.5f};
  for (std::int64_t i = 0; i < raw.n_res; ++i) {
    raw.aatype_one_hot[static_cast<std::size_t>(i * 22 +
                                                hhblits_ids[static_cast<std::size_t>(i)])] = 1.f;
    for (const char* atom : {"N", "CA", "C", "CB", "O"}) {
      const int a = atom37_index(atom);
      for (int k = 0; k < 3; ++k) {
        raw.all_atom_positions[static_cast<std::size_t>((i * 37 + a) * 3 + k)] =
            static_cast<float>(100 * i + 10 * a + k);
      }
      raw.all_atom_mask[static_cast<std::size_t>(i * 37 + a)] = 1.f;
    }
  }
  return raw;
}

TEST(ProcessTemplates, AatypePseudoBetaAndMasks) {
  // G, A, gap: HHblits ids 5, 0, 21.
  const RawTemplates raw = one_template({5, 0, 21});
  Arena arena("templates", dram_tier(), template_inputs_bytes(1, 3));
  TrunkInputs in;
  process_templates(raw, in, arena);
  EXPECT_EQ(arena.used(), template_inputs_bytes(1, 3));
  ASSERT_EQ(in.n_templ(), 1);
  EXPECT_EQ(in.template_aatype.at<std::int64_t>({0, 0}), restype_index('G'));
  EXPECT_EQ(in.template_aatype.at<std::int64_t>({0, 1}), restype_index('A'));
  EXPECT_EQ(in.template_aatype.at<std::int64_t>({0, 2}), 21);  // the gap stays 21
  EXPECT_EQ(in.template_mask.at<float>({0}), 1.f);
  // Glycine's pseudo-beta is CA, the others' CB.
  const int ca = atom37_index("CA"), cb = atom37_index("CB");
  for (std::int64_t i = 0; i < 3; ++i) {
    const int a = i == 0 ? ca : cb;
    for (std::int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(in.template_pseudo_beta.at<float>({0, i, k}),
                in.template_all_atom_positions.at<float>({0, i, a, k}))
          << i;
    }
    EXPECT_EQ(in.template_pseudo_beta_mask.at<float>({0, i}), 1.f);
  }
  // Backbone torsion masks: no pre-omega / phi for the first residue; psi everywhere; no chis
  // (G, A have none; the gap counts as X).
  for (std::int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(in.template_torsion_angles_mask.at<float>({0, i, 0}), i > 0 ? 1.f : 0.f);
    EXPECT_EQ(in.template_torsion_angles_mask.at<float>({0, i, 1}), i > 0 ? 1.f : 0.f);
    EXPECT_EQ(in.template_torsion_angles_mask.at<float>({0, i, 2}), 1.f);
    for (std::int64_t t = 3; t < 7; ++t)
      EXPECT_EQ(in.template_torsion_angles_mask.at<float>({0, i, t}), 0.f);
  }
}

TEST(ProcessTemplates, NoTemplatesGivesZeroRows) {
  RawTemplates raw;
  raw.n_res = 5;
  Arena arena("templates", dram_tier(), template_inputs_bytes(0, 5) + 64);
  TrunkInputs in;
  process_templates(raw, in, arena);
  EXPECT_EQ(in.n_templ(), 0);
  EXPECT_EQ(in.template_aatype.shape(), (Shape{0, 5}));
  EXPECT_EQ(in.template_torsion_angles_sin_cos.shape(), (Shape{0, 5, 7, 2}));
  EXPECT_EQ(in.template_mask.shape(), (Shape{0}));
}

TEST(ProcessTemplates, WrongSizesAreInputErrorsNamingTheField) {
  RawTemplates raw = one_template({0, 1});
  raw.all_atom_mask.pop_back();
  Arena arena("templates", dram_tier(), template_inputs_bytes(1, 2));
  TrunkInputs in;
  const std::string msg =
      testing::thrown_message<InputError>([&] { process_templates(raw, in, arena); });
  EXPECT_NE(msg.find("template_all_atom_mask"), std::string::npos) << msg;
}

}  // namespace
}  // namespace cpufold
