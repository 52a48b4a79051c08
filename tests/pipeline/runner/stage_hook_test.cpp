// RunOptions::on_stage: every stage of a run is announced as it begins, recycling iterations
// included, and "done" at the end; synthetic features are sized exactly for their arena.
#include <gtest/gtest.h>

#include <cmath>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/synthetic_features.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

TEST(StageHook, AnnouncesEachStageOfEveryIterationThenDone) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);
  const ModelRunner runner(store, config);
  const FeatureSource source = synthetic_feature_source({20, 6, 10, 2, 2});
  std::vector<std::string> stages;
  RunOptions options;
  options.recycles = 1;
  options.on_stage = [&](std::string_view s) { stages.emplace_back(s); };
  const Prediction p = runner.run(source, options);
  const std::vector<std::string> expected = {"features", "trunk",     "structure", "features",
                                             "trunk",    "structure", "heads",     "done"};
  EXPECT_EQ(stages, expected);
  EXPECT_EQ(p.iterations, 2);
  EXPECT_EQ(p.plddt.dim(0), 20);
  for (std::int64_t i = 0; i < 20; ++i) EXPECT_TRUE(std::isfinite(p.plddt.at<float>({i})));
}

TEST(SyntheticFeatures, FillTheirArenaExactlyAndDifferPerIteration) {
  const FeatureSource source = synthetic_feature_source({12, 5, 7, 3, 2});
  Arena a("a", dram_tier(), source.bytes_per_iteration);
  Arena b("b", dram_tier(), source.bytes_per_iteration);
  const TrunkInputs first = source.read(0, a);
  const TrunkInputs second = source.read(1, b);
  EXPECT_EQ(a.used(), source.bytes_per_iteration);
  EXPECT_EQ(first.n_res(), 12);
  EXPECT_EQ(first.n_seq(), 5);
  EXPECT_EQ(first.n_extra(), 7);
  EXPECT_EQ(first.n_templ(), 3);
  EXPECT_NE(first.extra_deletion_value.at<float>({0, 0}),
            second.extra_deletion_value.at<float>({0, 0}));
  EXPECT_THROW(synthetic_feature_source({0, 5, 7, 0, 1}), InputError);
}

}  // namespace
}  // namespace cpufold
