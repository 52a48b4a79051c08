// The feature pipeline's FeatureSource driving the model runner (runner on top of features).
#include <gtest/gtest.h>

#include <cmath>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/runner/model_runner.h"
#include "tests/pipeline/features/synthetic_msa.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

using testing::synthetic_raw;

TEST(FeaturePipeline, SourceDrivesTheModelForTwoIterations) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_3_ptm"));
  const ModelConfig model_config = ModelConfig::from_weights(store);
  const ModelRunner runner(store, model_config);
  FeatureConfig config = af2_feature_config("model_3_ptm");
  config.max_msa_clusters = 8;
  config.max_extra_msa = 16;
  const FeaturePipeline pipeline(synthetic_raw(20, 30, 3), config);
  RunOptions options;
  options.recycles = 1;
  const Prediction p = runner.run(pipeline.source(2), options);
  EXPECT_EQ(p.iterations, 2);
  for (const Tensor* t : {&p.plddt, &p.final_atom_positions, &p.pair, &p.single, &p.msa}) {
    std::vector<float> v(static_cast<std::size_t>(t->numel()));
    ASSERT_TRUE(t->is_contiguous());
    const float* data = t->data_as<float>();
    for (std::int64_t i = 0; i < t->numel(); ++i)
      ASSERT_TRUE(std::isfinite(data[i])) << t->describe();
  }
  EXPECT_EQ(p.msa.dim(0), 8);
  EXPECT_EQ(p.pair.dim(0), 20);
}

TEST(FeaturePipeline, SingleSequenceFeaturesDriveTheModel) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_3_ptm"));
  const ModelRunner runner(store, ModelConfig::from_weights(store));
  const FeaturePipeline pipeline(make_raw_features("MKVLAWGSTREDQ", {}, {}),
                                 af2_feature_config("model_3_ptm"));
  RunOptions options;
  options.recycles = 1;
  const Prediction p = runner.run(pipeline.source(2), options);
  EXPECT_EQ(p.msa.dim(0), 1);
  const float* plddt = p.plddt.data_as<float>();
  for (std::int64_t i = 0; i < p.plddt.numel(); ++i) ASSERT_TRUE(std::isfinite(plddt[i]));
}

}  // namespace
}  // namespace cpufold
