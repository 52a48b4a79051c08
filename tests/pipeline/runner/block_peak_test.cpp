// The predicted peak of one block (what `bench block` and `profile --blocks-only` print) is made
// of the arenas BlockBench makes: if the two drifted apart, the prediction would be of another
// block than the one measured.
#include "pipeline/runner/block_peak.h"

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/file_tier.h"
#include "ops/compute_precision.h"
#include "pipeline/runner/block_bench.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

constexpr std::int64_t kRows = 6, kResidues = 20;

void expect_prediction_is_what_the_bench_allocates(EvoformerBlock::Kind kind, DType precision,
                                                   Tier& msa_tier) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);
  BlockBench bench(store, config, kind, precision, kRows, kResidues, msa_tier, dram_tier());
  for (const std::int64_t chunk : {0, 4}) {
    bench.run(chunk);
    const BlockShape shape = bench.shape(chunk);
    EXPECT_EQ(shape.kind, kind);
    EXPECT_EQ(shape.n_seq, kRows);
    EXPECT_EQ(shape.n_res, kResidues);
    EXPECT_EQ(shape.msa_apart, &msa_tier != &dram_tier());
    constexpr std::size_t kResident = 12345;
    const BlockPeak p = predict_block_peak(bench.block(), config, shape, kResident);
    EXPECT_EQ(p.resident, kResident);
    EXPECT_EQ(p.activations, bench.activation_bytes()) << "chunk " << chunk;
    EXPECT_EQ(p.scratch, bench.last_scratch_bytes()) << "chunk " << chunk;
    EXPECT_LE(bench.last_scratch_high_water(), p.scratch) << "chunk " << chunk;
    EXPECT_EQ(p.total(), kResident + bench.activation_bytes() + bench.last_scratch_bytes());
  }
}

TEST(BlockPeak, IsTheEvoformerBenchsArenasOnTopOfWhatIsResident) {
  expect_prediction_is_what_the_bench_allocates(EvoformerBlock::Kind::evoformer, DType::f32,
                                                dram_tier());
}

TEST(BlockPeak, IsTheExtraMsaBenchsArenasInBf16Too) {
  if (!bf16_support().native) GTEST_SKIP() << "no native bf16 (" << bf16_support().isa << ")";
  // The extra-MSA representation is bf16 in a bf16 block: half the MSA arena.
  expect_prediction_is_what_the_bench_allocates(EvoformerBlock::Kind::extra_msa, DType::bf16,
                                                dram_tier());
}

TEST(BlockPeak, CountsTheTriangleEdgesWhenTheMsaIsSpilled) {
  const testing::ScratchDir dir;
  FileTier files(dir.path());
  expect_prediction_is_what_the_bench_allocates(EvoformerBlock::Kind::evoformer, DType::f32, files);
}

TEST(BlockPeak, LineComparesTheMeasuredPeakWithEachPart) {
  const BlockPeak p{std::size_t{100} << 20, std::size_t{300} << 20, std::size_t{600} << 20};
  EXPECT_EQ(block_peak_line(std::size_t{1010} << 20, p),
            "Peak: 1010.0 MiB RSS against 1000.0 MiB predicted (100.0 MiB resident + 300.0 MiB "
            "of activations + 600.0 MiB of planned scratch), ratio 1.010");
}

}  // namespace
}  // namespace cpufold
