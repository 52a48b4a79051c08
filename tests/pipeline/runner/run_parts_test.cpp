// The parts of a run, each alone: the plan step (run_memory.h), the kept iterations and the stop
// decision of the iteration step (recycling_run.h), AF2 ensembling's buffers and the early-stop
// measure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "memory/error.h"
#include "memory/tensor_copy.h"
#include "pipeline/runner/ensemble_buffers.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/recycle_stop.h"
#include "pipeline/runner/run_memory.h"
#include "pipeline/runner/synthetic_features.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

const LoadedModel& tiny_model() {
  static const LoadedModel model = load_model(testing::tiny_params("model_1_ptm"), {});
  return model;
}

constexpr SyntheticSizes kSizes{16, 4, 8, 2, 3};

TEST(PlanStep, MakesEveryArenaOfThePlanBeforeAnyModelWork) {
  const FeatureSource source = synthetic_feature_source(kSizes);
  Arena features("features", dram_tier(), source.bytes_per_iteration);
  Prediction p;
  const PlannedRun r = plan_run(*tiny_model().runner, source, RunOptions{}, features, p, {});
  EXPECT_EQ(r.dims.n_res, 16);
  EXPECT_EQ(r.chunks, p.plan.chosen.chunks);
  ASSERT_TRUE(p.arena && p.scratch);
  EXPECT_FALSE(p.activations) << "nothing spills without a spill dir";
  EXPECT_EQ(features.capacity() + p.arena->capacity() + p.scratch->capacity(), p.planned_bytes);
  EXPECT_EQ(p.arena->used(), 0u) << "the plan step allocates no outputs";
}

TEST(PlanStep, ABudgetNoPlanMeetsIsRefusedThere) {
  const FeatureSource source = synthetic_feature_source(kSizes);
  Arena features("features", dram_tier(), source.bytes_per_iteration);
  Prediction p;
  RunOptions o;
  o.mem_budget = 1;
  EXPECT_THROW(plan_run(*tiny_model().runner, source, o, features, p, {}), BudgetError);
  EXPECT_FALSE(p.arena);
}

TEST(IterationStep, KeptIterationsAreEachIterationsStructureAndArePlanned) {
  const ModelRunner& runner = *tiny_model().runner;
  RunOptions o;
  o.recycles = 2;
  o.keep_iterations = true;
  const Prediction p = runner.run(synthetic_feature_source(kSizes), o);
  ASSERT_EQ(p.kept_iterations.size(), 3u);
  const IterationStructure& last = p.kept_iterations.back();
  EXPECT_EQ(std::memcmp(last.atom_positions.data(), p.final_atom_positions.data(),
                        p.final_atom_positions.nbytes()),
            0);
  EXPECT_EQ(std::memcmp(last.plddt.data(), p.plddt.data(), p.plddt.nbytes()), 0);
  EXPECT_NE(std::memcmp(p.kept_iterations[0].atom_positions.data(), last.atom_positions.data(),
                        last.atom_positions.nbytes()),
            0)
      << "recycling moves the structure";

  RunOptions plain = o;
  plain.keep_iterations = false;
  const TrunkDims d{16, 4, 8, 2};
  const ChunkSizes chunks = p.plan.chosen.chunks;
  EXPECT_EQ(runner.arena_bytes(d, 0, o, chunks, false).outputs -
                runner.arena_bytes(d, 0, plain, chunks, false).outputs,
            3 * IterationStructure::bytes(16));
  const Prediction q = runner.run(synthetic_feature_source(kSizes), plain);
  EXPECT_TRUE(q.kept_iterations.empty());
  EXPECT_EQ(std::memcmp(q.final_atom_positions.data(), p.final_atom_positions.data(),
                        p.final_atom_positions.nbytes()),
            0)
      << "keeping iterations changes no number";
}

// A run that keeps every iteration never resumes from a checkpoint (it would miss the
// iterations before it), whoever sets its options.
TEST(IterationStep, KeptIterationsTakeNoCheckpoint) {
  testing::ScratchDir dir;
  RunOptions o;
  o.recycles = 2;
  o.keep_iterations = true;
  o.spill_dir = dir.path();
  std::vector<std::string> lines;
  o.progress = [&lines](const std::string& line) { lines.push_back(line); };
  const Prediction p = tiny_model().runner->run(synthetic_feature_source(kSizes), o);
  EXPECT_EQ(p.kept_iterations.size(), 3u);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("no checkpoints") != std::string::npos;
  }));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ADD_FAILURE() << "left in the spill dir: " << entry.path();
}

TEST(IterationStep, StopWhenEndsRecyclingAtTheFirstIterationItAccepts) {
  RunOptions o;
  o.recycles = 2;
  int asked = 0;
  o.stop_when = [&asked](const Prediction& now) {
    EXPECT_GT(now.plddt.numel(), 0) << "the heads ran before the decision";
    return ++asked == 2;
  };
  const Prediction p = tiny_model().runner->run(synthetic_feature_source(kSizes), o);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(p.iterations, 2);
}

TEST(EnsembleBuffers, AverageTheMembersAndKeepTheFirstMembersMsa) {
  const TrunkDims d{3, 2, 1, 0};
  const ModelConfig& c = tiny_model().config();
  Arena arena("test", dram_tier(), 2 * EnsembleBuffers::bytes(d, c) + (1 << 20));
  const EnsembleBuffers b = EnsembleBuffers::allocate(d, c, arena);
  TrunkState s;
  s.msa_first_row = arena.allocate(DType::f32, {d.n_res, c.c_m});
  s.pair = arena.allocate(DType::f32, {d.n_res, d.n_res, c.c_z});
  s.single = arena.allocate(DType::f32, {d.n_res, c.c_s});
  s.msa = arena.allocate(DType::f32, {d.n_seq, d.n_res, c.c_m});
  auto fill = [&s](float v) {
    for (const Tensor* t : {&s.msa_first_row, &s.pair, &s.single, &s.msa}) {
      for (std::int64_t i = 0; i < t->numel(); ++i) t->data_as<float>()[i] = v;
    }
  };
  fill(1);
  b.save_recycled(s);
  b.accumulate(s, 0);
  fill(7);
  b.restore_recycled(s);
  EXPECT_EQ(s.pair.data_as<float>()[0], 1) << "every member starts from the recycled inputs";
  fill(5);
  b.accumulate(s, 1);
  b.average_into(s, 2);
  EXPECT_EQ(s.pair.data_as<float>()[0], 3);
  EXPECT_EQ(s.single.data_as<float>()[0], 3);
  EXPECT_EQ(s.msa_first_row.data_as<float>()[0], 3);
  EXPECT_EQ(s.msa.data_as<float>()[0], 1) << "the MSA is the first member's";
}

TEST(RecycleStop, CaDistanceChangeIgnoresTheFrameAndMeasuresStretch) {
  std::vector<float> atoms(2 * 37 * 3, 0.0f), ca(2 * 3, 0.0f);
  const Tensor atom37(atoms.data(), DType::f32, Shape{2, 37, 3});
  const Tensor ca_prev(ca.data(), DType::f32, Shape{2, 3});
  atom37.at<float>({1, 1, 0}) = 3;  // CA of residue 1 at x = 3
  copy_ca(atom37, ca_prev);
  EXPECT_EQ(ca_prev.at<float>({1, 0}), 3);
  for (float& v : atoms) v += 10;  // the same structure moved
  EXPECT_DOUBLE_EQ(ca_distance_change(ca_prev, atom37), 0);
  atom37.at<float>({1, 1, 0}) = 10 + 5;  // now 5 apart: two of four pairs change by 2 Å
  EXPECT_DOUBLE_EQ(ca_distance_change(ca_prev, atom37), std::sqrt(2.0 * 4 / 4));
}

}  // namespace
}  // namespace cpufold
