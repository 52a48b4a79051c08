// Whole Evoformer and extra-MSA blocks against the reference traces (iteration 0 and 1).
#include <gtest/gtest.h>

#include "evoformer/evoformer_block.h"
#include "io/model_config.h"
#include "memory/tensor_copy.h"
#include "tests/support/parity.h"
#include "tests/support/reference_case_test.h"
#include "tests/support/reference_cases.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

class EvoformerBlockParity : public testing::ReferenceCaseTest {
 protected:
  // Runs `block` on trace/<module>/call_<k>/in_* and compares with out_*.
  void check_block(const std::string& module, EvoformerBlock::Kind kind, std::int64_t index,
                   const std::string& msa_mask_name, std::int64_t chunk) {
    const WeightStore store = WeightStore::open(params_path_);
    const ModelConfig config = ModelConfig::from_weights(store);
    const EvoformerBlock block(store, config, kind, index);
    const Hdf5TensorReader ref(ref_path_);
    Arena arena("test", dram_tier(), std::size_t{1} << 30);
    for (int call = 0; call < 2; ++call) {
      ArenaScope scope(arena);
      const std::string base = "trace/" + module + "/call_" + std::to_string(call) + "/";
      const std::string masks = "masks/iter_" + std::to_string(call) + "/";
      Tensor m = arena.allocate(DType::f32, ref.shape(base + "in_0"));
      Tensor z = arena.allocate(DType::f32, ref.shape(base + "in_1"));
      Tensor msa_mask = arena.allocate(DType::f32, ref.shape(masks + msa_mask_name));
      Tensor pair_mask = arena.allocate(DType::f32, ref.shape(masks + "pair_mask"));
      ref.read(base + "in_0", m);
      ref.read(base + "in_1", z);
      ref.read(masks + msa_mask_name, msa_mask);
      ref.read(masks + "pair_mask", pair_mask);
      RunContext ctx{&arena, chunk, nullptr, call};
      block.forward(m, z, msa_mask, pair_mask, ctx);
      EXPECT_TRUE(
          testing::matches_reference(ref, base + "out_0", m, testing::kRepresentationTolerance));
      EXPECT_TRUE(
          testing::matches_reference(ref, base + "out_1", z, testing::kRepresentationTolerance));
    }
  }
};

TEST_P(EvoformerBlockParity, EvoformerBlocksMatchTraces) {
  for (std::int64_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("evoformer block " + std::to_string(i));
    check_block("evoformer_block_" + std::to_string(i), EvoformerBlock::Kind::evoformer, i,
                "evoformer_msa_mask", 0);
  }
}

TEST_P(EvoformerBlockParity, ExtraMsaBlockMatchesTrace) {
  check_block("extra_msa_block_0", EvoformerBlock::Kind::extra_msa, 0, "extra_msa_mask", 0);
}

TEST_P(EvoformerBlockParity, ChunkedEvoformerBlockMatchesTrace) {
  check_block("evoformer_block_1", EvoformerBlock::Kind::evoformer, 1, "evoformer_msa_mask", 3);
}

INSTANTIATE_TEST_SUITE_P(Reference, EvoformerBlockParity,
                         ::testing::ValuesIn(testing::rec1_cases()),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace cpufold
