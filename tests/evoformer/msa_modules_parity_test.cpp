// Parity of the MSA-side modules (AF2 Alg. 7, 8, 9, 10, 15) with the reference's replay of
// Evoformer block 0 at recycling iteration 0: each step reads the state before it and must give
// both the residual update and the state after it, unchunked and chunked.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "evoformer/msa_column_attention.h"
#include "evoformer/msa_row_attention_with_pair_bias.h"
#include "evoformer/outer_product_mean.h"
#include "evoformer/transition.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/param_scope.h"
#include "tests/evoformer/triangle_test_util.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold::testing {
namespace {

enum class Step {
  row_attention,
  column_attention,
  msa_transition,
  outer_product_mean,
  pair_transition
};

struct StepNames {
  const char* input;   // state the module reads (the MSA for OPM)
  const char* target;  // state the update is added to (z_in for OPM, else == input)
  const char* update;  // the step's residual update
  const char* state;   // state after it
};

StepNames names(Step s) {
  switch (s) {
    case Step::row_attention:
      return {"m_in", "m_in", "upd_01_msa_row_attention_with_pair_bias", "m_01"};
    case Step::column_attention:
      return {"m_01", "m_01", "upd_02_msa_column_attention", "m_02"};
    case Step::msa_transition:
      return {"m_02", "m_02", "upd_03_msa_transition", "m_03"};
    case Step::outer_product_mean:
      return {"m_03", "z_in", "upd_04_outer_product_mean", "z_04"};
    case Step::pair_transition:
      return {"z_08", "z_08", "upd_09_pair_transition", "z_09"};
  }
  return {};
}

struct Case {
  ReferenceCase ref;
  Step step;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* steps[] = {"MsaRowAttention", "MsaColumnAttention", "MsaTransition",
                                "OuterProductMean", "PairTransition"};
  return std::string(steps[static_cast<int>(info.param.step)]) + "_" +
         testing::case_name(info.param.ref);
}

class MsaModuleParity : public ::testing::TestWithParam<Case> {};

TEST_P(MsaModuleParity, Block0StepMatchesReference) {
  const Case& c = GetParam();
  const ResolvedCase paths = resolve(c.ref);
  if (paths.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
  ASSERT_FALSE(paths.reference.empty() || paths.params.empty());
  const Hdf5TensorReader ref(paths.reference);
  const WeightStore store = WeightStore::open(paths.params);
  const ModelConfig cfg = ModelConfig::from_weights(store);
  const ParamScope block(store, "evoformer/evoformer_iteration", 0, cfg.n_evoformer_blocks);
  const StepNames n = names(c.step);
  const std::string g = "evoformer_block0_steps_iter0/";

  const OwnedTensor input(ref, g + n.input);
  const OwnedTensor z_in(ref, g + "z_in");
  const OwnedTensor msa_mask(ref, g + "msa_mask");
  const OwnedTensor pair_mask(ref, g + "pair_mask");
  const std::int64_t n_seq = msa_mask.view.dim(0), n_res = msa_mask.view.dim(1);

  std::unique_ptr<MsaRowAttentionWithPairBias> row;
  std::unique_ptr<MsaColumnAttention> column;
  std::unique_ptr<Transition> transition;
  std::unique_ptr<OuterProductMean> opm;
  switch (c.step) {
    case Step::row_attention:
      row = std::make_unique<MsaRowAttentionWithPairBias>(
          block / "msa_row_attention_with_pair_bias", cfg.c_m, cfg.c_z, cfg.msa_row_attention);
      break;
    case Step::column_attention:
      column = std::make_unique<MsaColumnAttention>(block / "msa_column_attention", cfg.c_m,
                                                    cfg.msa_column_attention);
      break;
    case Step::msa_transition:
      transition = std::make_unique<Transition>(block / "msa_transition", cfg.c_m,
                                                cfg.msa_transition_factor);
      break;
    case Step::outer_product_mean:
      opm = std::make_unique<OuterProductMean>(block / "outer_product_mean", cfg.c_m, cfg.c_z,
                                               cfg.c_hidden_opm);
      break;
    case Step::pair_transition:
      transition = std::make_unique<Transition>(block / "pair_transition", cfg.c_z,
                                                cfg.pair_transition_factor);
      break;
  }

  for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{5}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::size_t scratch = 0;
    switch (c.step) {
      case Step::row_attention:
        scratch = row->scratch_bytes(n_seq, n_res, chunk);
        break;
      case Step::column_attention:
        scratch = column->scratch_bytes(n_seq, n_res, chunk);
        break;
      case Step::msa_transition:
        scratch = transition->scratch_bytes(n_seq, n_res, chunk, false);
        break;
      case Step::outer_product_mean:
        scratch = opm->scratch_bytes(n_seq, n_res, chunk);
        break;
      case Step::pair_transition:
        scratch = transition->scratch_bytes(n_res, n_res, chunk, true);
        break;
    }
    Arena arena = sized_arena(scratch);
    RunContext ctx;
    ctx.scratch = &arena;
    ctx.chunk = chunk;

    const bool pair_target = c.step == Step::outer_product_mean;
    OwnedTensor state(pair_target ? z_in.view.shape() : input.view.shape());
    const std::vector<float>& before = pair_target ? z_in.data : input.data;
    std::copy(before.begin(), before.end(), state.data.begin());  // keeps state.view valid
    switch (c.step) {
      case Step::row_attention:
        row->forward(state.view, z_in.view, msa_mask.view, ctx);
        break;
      case Step::column_attention:
        column->forward(state.view, msa_mask.view, ctx);
        break;
      // The reference runs with OpenFold's _mask_trans = False: no mask in the MSA transition.
      case Step::msa_transition:
        transition->forward(state.view, Tensor(), ctx);
        break;
      case Step::outer_product_mean:
        opm->forward(input.view, msa_mask.view, state.view, ctx);
        break;
      // All-ones pair mask: the masked path must give the reference's numbers too.
      case Step::pair_transition:
        transition->forward(state.view, pair_mask.view, ctx);
        break;
    }
    EXPECT_EQ(arena.used(), 0u) << "scratch not released";

    OwnedTensor update(state.view.shape());
    for (std::size_t i = 0; i < state.data.size(); ++i) update.data[i] = state.data[i] - before[i];
    expect_matches(ref, g + n.update, update.view);
    expect_matches(ref, g + n.state, state.view);
  }
}

std::vector<Case> step_cases() {
  std::vector<Case> cases;
  for (const ReferenceCase& ref : rec1_cases())
    for (const Step s : {Step::row_attention, Step::column_attention, Step::msa_transition,
                         Step::outer_product_mean, Step::pair_transition})
      cases.push_back({ref, s});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Evoformer, MsaModuleParity, ::testing::ValuesIn(step_cases()), case_name);

}  // namespace
}  // namespace cpufold::testing
