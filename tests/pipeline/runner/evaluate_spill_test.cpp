// A run whose activations (template pairs, extra-MSA and MSA representations) live in the
// spill tier (files, or a NUMA node) gives the bits of the same run held in DRAM: spilling moves
// bytes, not arithmetic.
#include <gtest/gtest.h>

#include <functional>

#include "io/hdf5_tensor_file.h"
#include "memory/numa_tier.h"
#include "pipeline/runner/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// Runs the tiny model_1_ptm case (templates, chunk 3) in DRAM and again with `spill` set on
// the options and the smallest budget: only a spilled plan meets it. The outputs must agree
// to the bit.
void expect_spilled_run_matches_dram(const std::function<void(EvaluateOptions&)>& spill) {
  testing::ScratchDir dir;
  EvaluateOptions o;
  o.params = testing::tiny_params("model_1_ptm");
  o.features = testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
  o.recycles = 1;
  o.chunks = ChunkSizes::all(3);
  o.out = dir / "dram.h5";
  evaluate(o);

  spill(o);
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
}

TEST(EvaluateSpill, SpilledRunWithTemplatesGivesTheBitsOfTheRunInDram) {
  testing::ScratchDir spill_dir;
  expect_spilled_run_matches_dram([&](EvaluateOptions& o) { o.spill_dir = spill_dir.path(); });
  EXPECT_TRUE(std::filesystem::is_empty(spill_dir.path()));
}

TEST(EvaluateSpill, RunSpilledToANumaNodeGivesTheBitsOfTheRunInDram) {
  const std::vector<NumaNodeMemory> nodes = numa_nodes();
  if (nodes.empty()) GTEST_SKIP() << "no NUMA support in this kernel";
  expect_spilled_run_matches_dram(
      [&](EvaluateOptions& o) { o.spill_numa_node = nodes.back().node; });
}

}  // namespace
}  // namespace cpufold
