#include "io/model_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// Expected configuration of each reference parameter file (reduced depth: 2 Evoformer blocks,
// 1 extra-MSA block, 1 template block; see ../shared/reference/README.md): the tiny or full
// widths, the template stack's only in model_1 (model_3 has none).
struct Widths {
  std::int64_t c_m, c_z, c_s, c_e, c_t;
  AttentionDims msa_row, triangle, extra_row, extra_global, template_triangle, pointwise;
  std::int64_t ipa_heads, c_ipa;
};
constexpr Widths kTinyWidths{32,     16,     32,     8,      8, {2, 8}, {2, 8},
                             {2, 4}, {2, 4}, {2, 4}, {2, 4}, 2, 8};
constexpr Widths kFullWidths{256,    128,    384,     64,      64, {8, 32}, {4, 32},
                             {8, 8}, {8, 8}, {4, 16}, {4, 16}, 12, 16};

struct Expected {
  const char* file;
  bool full_width;
  bool templates;

  Widths widths() const {
    Widths w = full_width ? kFullWidths : kTinyWidths;
    if (!templates) {
      w.c_t = 0;
      w.template_triangle = w.pointwise = {0, 0};
    }
    return w;
  }
};

const Expected kExpected[] = {{"params_model_1_ptm.npz", false, true},
                              {"params_model_3_ptm.npz", false, false},
                              {"params_model_1_ptm.npz", true, true},
                              {"params_model_3_ptm.npz", true, false}};

void PrintTo(const Expected& e, std::ostream* os) {
  *os << (e.full_width ? "full_width/" : "tiny/") << e.file;
}

// Total element count over a `.keys.txt` listing ("key<TAB>[d0, d1]<TAB>dtype" per line).
std::int64_t count_from_keys_file(const std::filesystem::path& keys) {
  std::ifstream in(keys);
  std::string line;
  std::int64_t total = 0;
  const std::regex number(R"(\d+)");
  while (std::getline(in, line)) {
    const auto open = line.find('['), close = line.find(']');
    const std::string dims = line.substr(open + 1, close - open - 1);
    std::int64_t n = 1;
    for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number);
         it != std::sregex_iterator(); ++it) {
      n *= std::stoll(it->str());
    }
    total += n;
  }
  return total;
}

void expect_dims(const AttentionDims& got, const AttentionDims& want, const char* what) {
  EXPECT_EQ(got.n_head, want.n_head) << what;
  EXPECT_EQ(got.c_hidden, want.c_hidden) << what;
}

class ModelConfigFromReference : public ::testing::TestWithParam<Expected> {};

TEST_P(ModelConfigFromReference, DetectsPresetWidthsHeadsAndDepths) {
  const Expected& e = GetParam();
  std::filesystem::path file;
  if (e.full_width) {
    if (!testing::reference_dir()) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
    file = testing::require_reference_file(std::filesystem::path("full_width/params") / e.file);
    ASSERT_FALSE(file.empty());
  } else {
    file = testing::test_data_dir() / "params" / e.file;
  }
  const WeightStore store = WeightStore::open(file);
  const ModelConfig c = ModelConfig::from_weights(store);
  const Widths w = e.widths();

  EXPECT_EQ(c.templates, e.templates);
  EXPECT_TRUE(c.ptm_head);
  EXPECT_EQ(c.c_m, w.c_m);
  EXPECT_EQ(c.c_z, w.c_z);
  EXPECT_EQ(c.c_s, w.c_s);
  EXPECT_EQ(c.c_e, w.c_e);
  EXPECT_EQ(c.c_t, w.c_t);
  EXPECT_EQ(c.n_evoformer_blocks, 2);
  EXPECT_EQ(c.n_extra_msa_blocks, 1);
  EXPECT_EQ(c.n_template_blocks, e.templates ? 1 : 0);
  expect_dims(c.msa_row_attention, w.msa_row, "msa row attention");
  expect_dims(c.msa_column_attention, w.msa_row, "msa column attention");
  expect_dims(c.triangle_attention, w.triangle, "triangle attention");
  expect_dims(c.extra_msa_row_attention, w.extra_row, "extra msa row attention");
  expect_dims(c.extra_msa_global_attention, w.extra_global, "extra msa global attention");
  expect_dims(c.template_triangle_attention, w.template_triangle, "template triangle attention");
  expect_dims(c.template_pointwise_attention, w.pointwise, "template pointwise attention");
  EXPECT_EQ(c.n_head_ipa, w.ipa_heads);
  EXPECT_EQ(c.c_ipa, w.c_ipa);
  EXPECT_EQ(c.n_qk_points, 4);
  EXPECT_EQ(c.n_v_points, 8);
  EXPECT_EQ(c.n_torsions, 7);
  EXPECT_EQ(c.msa_feat_dim, 49);
  EXPECT_EQ(c.target_feat_dim, 22);
  EXPECT_EQ(c.extra_msa_feat_dim, 25);
  EXPECT_EQ(c.max_relative_feature, 32);
  EXPECT_EQ(c.recycle_pos_bins, 15);
  EXPECT_EQ(c.lddt_bins, 50);
  EXPECT_EQ(c.distogram_bins, 64);
  EXPECT_EQ(c.pae_bins, 64);
  EXPECT_EQ(c.masked_msa_classes, 23);
  EXPECT_EQ(c.atom_types, 37);
  if (e.templates) {
    EXPECT_EQ(c.template_pair_feat_dim, 88);
    EXPECT_EQ(c.template_single_feat_dim, 57);
  }

  std::filesystem::path keys = file;
  keys.replace_extension(".keys.txt");
  EXPECT_EQ(c.parameter_count, count_from_keys_file(keys));
  EXPECT_EQ(c.preset_for_file(file.filename().string()), file.stem().string().substr(7));
}

INSTANTIATE_TEST_SUITE_P(AllReferenceFiles, ModelConfigFromReference,
                         ::testing::ValuesIn(kExpected), [](const auto& info) {
                           return std::string(info.param.full_width ? "full_" : "tiny_") +
                                  (info.param.templates ? "model_1_ptm" : "model_3_ptm");
                         });

TEST(ModelConfig, PresetNameFallsBackToFamilyWhenTheFileNameDisagrees) {
  ModelConfig c;
  c.templates = false;
  c.ptm_head = true;
  EXPECT_EQ(c.preset_for_file("params_model_4_ptm.npz"), "model_4_ptm");
  EXPECT_EQ(c.preset_for_file("params_model_1_ptm.npz"), c.preset_family());
  EXPECT_EQ(c.preset_for_file("weights.npz"), "model_3_ptm, model_4_ptm or model_5_ptm");
}

}  // namespace
}  // namespace cpufold
