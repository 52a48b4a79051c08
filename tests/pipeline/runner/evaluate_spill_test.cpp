// A run whose activations (template pairs, extra-MSA and MSA representations) live in the
// spill tier gives the bits of the same run held in DRAM: spilling moves bytes, not arithmetic.
#include <gtest/gtest.h>

#include "io/hdf5_tensor_file.h"
#include "pipeline/runner/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(EvaluateSpill, SpilledRunWithTemplatesGivesTheBitsOfTheRunInDram) {
  testing::ScratchDir dir;
  std::filesystem::create_directories(dir / "spill");
  EvaluateOptions o;
  o.params = testing::tiny_params("model_1_ptm");
  o.features = testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
  o.recycles = 1;
  o.chunk_size = 3;
  o.out = dir / "dram.h5";
  evaluate(o);

  o.spill_dir = dir / "spill";
  o.mem_budget = 1;  // below every plan: the smallest budget any plan (spilled or not) meets
  o.mem_budget = plan_evaluate(o).plan.min_budget_bytes;
  const MemoryPlan plan = plan_evaluate(o).plan;
  ASSERT_TRUE(plan.fits);
  ASSERT_GT(plan.spill_bytes, 0u) << "the budget must be one only a spilled plan meets";
  o.out = dir / "spilled.h5";
  evaluate(o);

  const Hdf5TensorReader dram(dir / "dram.h5"), spilled(dir / "spilled.h5");
  for (const char* name : {"outputs/msa", "outputs/pair", "outputs/single",
                           "outputs/final_atom_positions", "outputs/plddt"}) {
    EXPECT_EQ(spilled.read_f32(name), dram.read_f32(name)) << name;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir / "spill"));
}

}  // namespace
}  // namespace cpufold
