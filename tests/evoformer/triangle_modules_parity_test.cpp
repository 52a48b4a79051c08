// Parity of the triangle modules (AF2 Alg. 11-14) with the reference's replay of Evoformer
// block 0 at recycling iteration 0: each step reads the pair state before it and must give
// both the residual update and the state after it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/param_scope.h"
#include "tests/evoformer/triangle_test_util.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold::testing {
namespace {

enum class Step { tri_mul_outgoing, tri_mul_incoming, tri_att_starting, tri_att_ending };

struct StepNames {
  const char* input;   // state before the step
  const char* update;  // the step's residual update
  const char* state;   // state after it
  const char* module;  // AF2 scope below evoformer/evoformer_iteration
};

StepNames names(Step s) {
  switch (s) {
    case Step::tri_mul_outgoing:
      return {"z_04", "upd_05_triangle_multiplication_outgoing", "z_05",
              "triangle_multiplication_outgoing"};
    case Step::tri_mul_incoming:
      return {"z_05", "upd_06_triangle_multiplication_incoming", "z_06",
              "triangle_multiplication_incoming"};
    case Step::tri_att_starting:
      return {"z_06", "upd_07_triangle_attention_starting_node", "z_07",
              "triangle_attention_starting_node"};
    case Step::tri_att_ending:
      return {"z_07", "upd_08_triangle_attention_ending_node", "z_08",
              "triangle_attention_ending_node"};
  }
  return {};
}

struct Case {
  ReferenceCase ref;
  Step step;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* steps[] = {"TriMulOutgoing", "TriMulIncoming", "TriAttStarting",
                                "TriAttEnding"};
  return std::string(steps[static_cast<int>(info.param.step)]) + "_" +
         testing::case_name(info.param.ref);
}

class TriangleModuleParity : public ::testing::TestWithParam<Case> {};

TEST_P(TriangleModuleParity, Block0StepMatchesReference) {
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

  OwnedTensor z(ref, g + n.input);
  const OwnedTensor mask(ref, g + "pair_mask");
  const std::vector<float> z_in = z.data;
  const std::int64_t n_res = z.view.dim(0);

  std::unique_ptr<TriangleMultiplication> tri_mul;
  std::unique_ptr<TriangleAttention> tri_att;
  std::size_t scratch = 0;
  switch (c.step) {
    case Step::tri_mul_outgoing:
    case Step::tri_mul_incoming:
      tri_mul = std::make_unique<TriangleMultiplication>(
          block / n.module, cfg.c_z, cfg.c_hidden_tri_mul,
          c.step == Step::tri_mul_outgoing ? TriangleMultiplication::Direction::outgoing
                                           : TriangleMultiplication::Direction::incoming);
      scratch = tri_mul->scratch_bytes(n_res);
      break;
    case Step::tri_att_starting:
    case Step::tri_att_ending:
      tri_att = std::make_unique<TriangleAttention>(
          block / n.module, cfg.c_z, cfg.triangle_attention,
          c.step == Step::tri_att_starting ? TriangleAttention::Node::starting
                                           : TriangleAttention::Node::ending);
      scratch = tri_att->scratch_bytes(n_res, 0);
      break;
  }
  Arena arena = sized_arena(scratch);
  RunContext ctx;
  ctx.scratch = &arena;
  if (tri_mul) tri_mul->forward(z.view, mask.view, ctx);
  if (tri_att) tri_att->forward(z.view, mask.view, ctx);
  EXPECT_EQ(arena.used(), 0u) << "scratch not released";

  OwnedTensor update(z.view.shape());
  for (std::size_t i = 0; i < z.data.size(); ++i) update.data[i] = z.data[i] - z_in[i];
  expect_matches(ref, g + n.update, update.view);
  expect_matches(ref, g + n.state, z.view);
}

std::vector<Case> step_cases() {
  std::vector<Case> cases;
  for (const ReferenceCase& ref : rec1_cases())
    for (const Step s : {Step::tri_mul_outgoing, Step::tri_mul_incoming, Step::tri_att_starting,
                         Step::tri_att_ending})
      cases.push_back({ref, s});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Evoformer, TriangleModuleParity, ::testing::ValuesIn(step_cases()),
                         case_name);

}  // namespace
}  // namespace cpufold::testing
