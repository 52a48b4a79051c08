// A run slices each family with its own chunk: its arenas are planned per family, so a stack
// that took another family's chunk would overrun them. Sizes where that stack's unsliced
// transients outweigh every other phase make the overrun certain.
#include <gtest/gtest.h>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/synthetic_features.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

void expect_runs_within_its_plan(const SyntheticSizes& sizes, ChunkFamily sliced) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);
  const ModelRunner runner(store, config);
  RunOptions options;
  options.recycles = 0;
  ChunkSizes chunks;   // every family unsliced...
  chunks[sliced] = 1;  // ...but this one
  options.chunks = chunks;
  const Prediction p = runner.run(synthetic_feature_source(sizes), options);
  EXPECT_EQ(p.plan.chosen.chunks, chunks);
  EXPECT_EQ(p.iterations, 1);
}

TEST(FamilyChunks, TheExtraMsaStackSlicesWithItsOwnChunk) {
  expect_runs_within_its_plan({24, 2, 400, 0, 1}, ChunkFamily::extra_msa);
}

TEST(FamilyChunks, TheEvoformerSlicesWithItsOwnChunk) {
  expect_runs_within_its_plan({24, 400, 2, 0, 1}, ChunkFamily::evoformer);
}

}  // namespace
}  // namespace cpufold
