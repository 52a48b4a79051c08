// ColabFold's ranking_confidence and the order of a job's predictions.
#include "pipeline/batch/ranking.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

Prediction with_plddt(std::vector<float>& plddt, bool has_pae, float ptm) {
  Prediction p;
  p.plddt = Tensor(plddt.data(), DType::f32, Shape{static_cast<std::int64_t>(plddt.size())});
  p.has_pae = has_pae;
  p.ptm_score = ptm;
  return p;
}

TEST(Ranking, MeanPlddtOrHundredTimesPtm) {
  std::vector<float> plddt = {50, 70, 90};
  const Prediction p = with_plddt(plddt, true, 0.8f);
  EXPECT_DOUBLE_EQ(ranking_score(p, RankBy::plddt), 70.0);
  EXPECT_NEAR(ranking_score(p, RankBy::ptm), 80.0, 1e-5);
}

TEST(Ranking, PtmWithoutPaeHeadFallsBackToPlddt) {
  std::vector<float> plddt = {40, 60};
  EXPECT_DOUBLE_EQ(ranking_score(with_plddt(plddt, false, 0), RankBy::ptm), 50.0);
}

TEST(Ranking, BestFirstAndTiesInColabfoldsReversedRunOrder) {
  std::vector<RenderedPrediction> r(4);
  const double scores[] = {60, 80, 60, 90};
  for (int i = 0; i < 4; ++i) {
    r[i].score = scores[i];
    r[i].model_number = i + 1;
  }
  sort_by_score(r);
  std::vector<int> order;
  for (const RenderedPrediction& x : r) order.push_back(x.model_number);
  // ColabFold: np.argsort([60, 80, 60, 90])[::-1] = [3, 1, 2, 0].
  EXPECT_EQ(order, (std::vector<int>{4, 2, 3, 1}));
}

TEST(Ranking, ParsesTheThreeNamesAndRefusesOthers) {
  EXPECT_EQ(parse_rank_by("auto"), RankBy::automatic);
  EXPECT_EQ(parse_rank_by("plddt"), RankBy::plddt);
  EXPECT_EQ(parse_rank_by("ptm"), RankBy::ptm);
  EXPECT_NE(testing::thrown_message<InputError>([] { parse_rank_by("iptm"); }).find("'iptm'"),
            std::string::npos);
}

}  // namespace
}  // namespace cpufold
