#include "pipeline/output/scores_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory/error.h"
#include "tests/pipeline/output/output_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using nlohmann::json;

// Values whose two-decimal rounding shows numpy's behaviour: half to even on exact halves.
constexpr float kPlddt[] = {87.654f, 0.125f, 0.375f, 12.3456f, 100.0f};

testing::FakePrediction prediction(bool has_pae) {
  return testing::fake_prediction(
      5, has_pae, [](std::int64_t i) { return kPlddt[i]; },
      [](std::int64_t i, std::int64_t j) {
        return i == 2 && j == 3 ? 25.126f : 0.25f * static_cast<float>(i) + 1.04f * j;
      });
}

TEST(ScoresJson, ColabFoldKeysInOrderRoundedToTwoDecimals) {
  const std::string text = scores_json(prediction(true));
  EXPECT_EQ(text.rfind("{\"plddt\":[", 0), 0u) << text.substr(0, 40);
  const json j = json::parse(text);
  ASSERT_EQ(j.size(), 4u);
  std::vector<std::string> keys;
  const auto ordered = nlohmann::ordered_json::parse(text);
  for (const auto& item : ordered.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"plddt", "max_pae", "pae", "ptm"}));

  EXPECT_EQ(j["plddt"].get<std::vector<double>>(),
            (std::vector<double>{87.65, 0.12, 0.38, 12.35, 100.0}));
  ASSERT_EQ(j["pae"].size(), 5u);
  for (const auto& row : j["pae"]) ASSERT_EQ(row.size(), 5u);
  EXPECT_DOUBLE_EQ(j["pae"][2][3].get<double>(), 25.13);
  EXPECT_DOUBLE_EQ(j["pae"][1][1].get<double>(), 1.29);  // 0.25 + 1.04
  EXPECT_DOUBLE_EQ(j["pae"][4][0].get<double>(), 1.0);
  // max_pae is the largest entry, as float, unrounded.
  EXPECT_DOUBLE_EQ(j["max_pae"].get<double>(), static_cast<double>(25.126f));
  EXPECT_DOUBLE_EQ(j["ptm"].get<double>(), 0.88);
}

TEST(ScoresJson, WithoutPaeHeadOnlyPlddt) {
  const json j = json::parse(scores_json(prediction(false)));
  EXPECT_EQ(j.size(), 1u);
  EXPECT_TRUE(j.contains("plddt"));
  EXPECT_FALSE(j.contains("pae"));
  EXPECT_FALSE(j.contains("max_pae"));
  EXPECT_FALSE(j.contains("ptm"));
}

TEST(PaeV1Json, ColabFoldLayoutCopiesTheScoresPaeAndMaxPae) {
  const testing::FakePrediction p = prediction(true);
  const json j = json::parse(pae_v1_json(p));
  const json scores = json::parse(scores_json(p));
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j["predicted_aligned_error"], scores["pae"]);
  EXPECT_EQ(j["max_predicted_aligned_error"], scores["max_pae"]);
  EXPECT_LT(j["max_predicted_aligned_error"].get<double>(), 31.75);  // not the head's bound
}

TEST(PaeV1Json, ThrowsInputErrorWithoutPaeHead) {
  const std::string msg =
      testing::thrown_message<InputError>([] { pae_v1_json(prediction(false)); });
  EXPECT_NE(msg.find("PAE head"), std::string::npos) << msg;
}

}  // namespace
}  // namespace cpufold
