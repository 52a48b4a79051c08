// A spilled plan places the triangle multiplications' c·n² right edges with the activations it
// spills. With 1,000 extra rows the extra-MSA representation and an edge set the spilled arena's
// peak, so an edge the plan left out would overrun it.
#include <gtest/gtest.h>

#include <cstring>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/synthetic_features.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(SpilledEdges, TriangleEdgesRunInTheSpilledArenaAndChangeNoBit) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);
  const ModelRunner runner(store, config);
  // Long enough that streaming the extra-MSA representation (a page of each of its 1,000 rows per
  // slab) holds less than the representation itself.
  const SyntheticSizes sizes{256, 2, 1000, 0, 1};
  const FeatureSource source = synthetic_feature_source(sizes);
  RunOptions dram;
  dram.recycles = 0;
  dram.chunks = ChunkSizes::all(4);
  const Prediction in_dram = runner.run(source, dram);

  const testing::ScratchDir dir;
  RunOptions spilled = dram;
  spilled.spill_dir = dir.path();
  const TrunkDims dims{sizes.n_res, sizes.msa_rows, sizes.extra_rows, sizes.templates};
  spilled.mem_budget = 1;  // below every plan: the plan's smallest budget follows
  spilled.mem_budget = runner.plan(dims, source.bytes_per_iteration, spilled).min_budget_bytes;
  const MemoryPlan plan = runner.plan(dims, source.bytes_per_iteration, spilled);
  ASSERT_TRUE(plan.fits);
  ASSERT_GT(plan.spill_bytes, 0u) << "the budget must be one only a spilled plan meets";
  const Prediction out = runner.run(source, spilled);

  ASSERT_EQ(out.pair.nbytes(), in_dram.pair.nbytes());
  EXPECT_EQ(std::memcmp(out.pair.data(), in_dram.pair.data(), out.pair.nbytes()), 0);
  ASSERT_EQ(out.final_atom_positions.nbytes(), in_dram.final_atom_positions.nbytes());
  EXPECT_EQ(std::memcmp(out.final_atom_positions.data(), in_dram.final_atom_positions.data(),
                        out.final_atom_positions.nbytes()),
            0);
}

}  // namespace
}  // namespace cpufold
