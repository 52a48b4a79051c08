// The reference's replay of Evoformer block 0 at recycling iteration 0
// (evoformer_block0_steps_iter0/: the state before each step, its residual update, the state
// after it). A step is described once, in one table row: its datasets, how to build its module,
// its scratch and how to run it. Block0StepParity runs any such step on a reference case and
// checks both the update and the state after it, for each chunk size the step lists.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold::testing {

// The replay's datasets a step may read besides the state it updates.
struct StepInputs {
  const Tensor& input;  // the state the module reads (the MSA for the outer product mean)
  const Tensor& z_in;   // the pair state entering the block (the row attention's bias)
  const Tensor& msa_mask;
  const Tensor& pair_mask;
  std::int64_t n_seq, n_res;
};

// One built module, seen only through its scratch estimate and its in-place update of `state`.
struct StepModule {
  std::function<std::size_t(const StepInputs&, std::int64_t chunk)> scratch_bytes;
  std::function<void(const StepInputs&, const Tensor& state, const RunContext&)> forward;
};

struct BlockStep {
  std::string name;    // test-name prefix, "MsaRowAttention"
  std::string input;   // dataset the module reads
  std::string target;  // state the update is added to (z_in for the outer product mean, else input)
  std::string update;  // the step's residual update
  std::string state;   // state after it
  std::vector<std::int64_t> chunks;  // ctx.chunk values to run with
  // Builds the module from block 0's parameters.
  std::function<StepModule(const ParamScope& block, const ModelConfig&)> build;
};

// The StepModule of one module, built once and shared by its two calls:
// `scratch(module, inputs, chunk)` and `forward(module, inputs, state, ctx)`.
template <typename Module, typename Scratch, typename Forward>
StepModule step_module(std::shared_ptr<const Module> module, Scratch scratch, Forward forward) {
  return {[module, scratch](const StepInputs& in, std::int64_t chunk) {
            return scratch(*module, in, chunk);
          },
          [module, forward](const StepInputs& in, const Tensor& state, const RunContext& ctx) {
            forward(*module, in, state, ctx);
          }};
}

struct StepCase {
  ReferenceCase ref;
  const BlockStep* step;
};

inline void PrintTo(const StepCase& c, std::ostream* os) {
  *os << c.step->name << " on ";
  PrintTo(c.ref, os);
}

// Every step on every single-recycle reference case (the replay is recorded in those files).
inline std::vector<StepCase> step_cases(const std::vector<BlockStep>& steps) {
  std::vector<StepCase> cases;
  for (const ReferenceCase& ref : rec1_cases())
    for (const BlockStep& step : steps) cases.push_back({ref, &step});
  return cases;
}

// "MsaRowAttention_tiny_model_1_ptm_rec1".
inline std::string step_case_name(const ::testing::TestParamInfo<StepCase>& info) {
  return info.param.step->name + "_" + case_name(info.param.ref);
}

class Block0StepParity : public ::testing::TestWithParam<StepCase> {
 protected:
  void check_step() const {
    const BlockStep& step = *GetParam().step;
    const ResolvedCase paths = resolve(GetParam().ref);
    if (paths.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
    ASSERT_FALSE(paths.reference.empty() || paths.params.empty());
    const Hdf5TensorReader ref(paths.reference);
    const WeightStore store = WeightStore::open(paths.params);
    const ModelConfig cfg = ModelConfig::from_weights(store);
    const ParamScope block(store, "evoformer/evoformer_iteration", 0, cfg.n_evoformer_blocks);
    const std::string g = "evoformer_block0_steps_iter0/";

    const OwnedTensor input(ref, g + step.input);
    const OwnedTensor target(ref, g + step.target);
    const OwnedTensor z_in(ref, g + "z_in");
    const OwnedTensor msa_mask(ref, g + "msa_mask");
    const OwnedTensor pair_mask(ref, g + "pair_mask");
    const StepInputs in{input.view,           z_in.view,           msa_mask.view, pair_mask.view,
                        msa_mask.view.dim(0), msa_mask.view.dim(1)};
    const StepModule module = step.build(block, cfg);

    for (const std::int64_t chunk : step.chunks) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      Arena arena = sized_arena(module.scratch_bytes(in, chunk));
      RunContext ctx;
      ctx.scratch = &arena;
      ctx.chunk = chunk;
      OwnedTensor state(target.view.shape());
      std::copy(target.data.begin(), target.data.end(), state.data.begin());
      module.forward(in, state.view, ctx);
      EXPECT_EQ(arena.used(), 0u) << "scratch not released";

      OwnedTensor update(state.view.shape());
      for (std::size_t i = 0; i < state.data.size(); ++i)
        update.data[i] = state.data[i] - target.data[i];
      expect_matches(ref, g + step.update, update.view);
      expect_matches(ref, g + step.state, state.view);
    }
  }
};

}  // namespace cpufold::testing
