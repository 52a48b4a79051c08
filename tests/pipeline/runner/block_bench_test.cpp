// `bench block` times each module of a block and divides its FLOPs by that time: the module
// the block announces and the count it is divided into must be the same module.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/runner/block_bench.h"
#include "pipeline/runner/model_flops.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

void expect_modules_timed_as_counted(EvoformerBlock::Kind kind) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);
  constexpr std::int64_t kRows = 6, kResidues = 20;
  BlockBench bench(store, config, kind, DType::f32, kRows, kResidues, dram_tier(), dram_tier());
  const double seconds = bench.run(0);

  const std::vector<ModuleFlops> counted =
      kind == EvoformerBlock::Kind::evoformer
          ? evoformer_block_module_flops(config, kRows, kResidues)
          : extra_msa_block_module_flops(config, kRows, kResidues);
  std::vector<std::string> counted_names, timed_names;
  double counted_flops = 0, timed_seconds = 0;
  for (const ModuleFlops& m : counted) {
    counted_names.emplace_back(m.module);
    counted_flops += m.flops;
  }
  for (const BlockBench::ModuleTime& m : bench.module_seconds()) {
    timed_names.push_back(m.module);
    EXPECT_GE(m.seconds, 0) << m.module;
    timed_seconds += m.seconds;
  }
  EXPECT_EQ(timed_names, counted_names);
  EXPECT_LE(timed_seconds, seconds);
  const double block_flops = kind == EvoformerBlock::Kind::evoformer
                                 ? evoformer_block_flops(config, kRows, kResidues)
                                 : extra_msa_block_flops(config, kRows, kResidues);
  EXPECT_DOUBLE_EQ(counted_flops, block_flops);

  // A second run adds to the same modules.
  bench.run(0);
  ASSERT_EQ(bench.module_seconds().size(), timed_names.size());
  for (std::size_t i = 0; i < timed_names.size(); ++i) {
    EXPECT_EQ(bench.module_seconds()[i].module, timed_names[i]);
  }
}

TEST(BlockBench, TimesEachEvoformerModuleUnderTheNameItsFlopsAreCountedBy) {
  expect_modules_timed_as_counted(EvoformerBlock::Kind::evoformer);
}

TEST(BlockBench, TimesEachExtraMsaModuleUnderTheNameItsFlopsAreCountedBy) {
  expect_modules_timed_as_counted(EvoformerBlock::Kind::extra_msa);
}

}  // namespace
}  // namespace cpufold
