// Parity of one template pair stack block (AF2 Alg. 16) with the reference's trace of
// template_pair_block_0: [n_templ, n_res, n_res, c_t] in, the same out, every template on its
// own, with the pair mask built from seq_mask as AF2 / OpenFold build it.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "evoformer/template_pair_block.h"
#include "io/feature_file.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/param_scope.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold::testing {
namespace {

constexpr char kStack[] =
    "evoformer/template_embedding/single_template_embedding/template_pair_stack/"
    "__layer_stack_no_state";

struct Case {
  ReferenceCase ref;
  int call;            // recycling iteration
  std::int64_t chunk;  // ctx.chunk
};

void PrintTo(const Case& c, std::ostream* os) {
  PrintTo(c.ref, os);
  *os << " call " << c.call << " chunk " << c.chunk;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return testing::case_name(info.param.ref) + "_call" + std::to_string(info.param.call) + "_chunk" +
         (info.param.chunk > 0 ? std::to_string(info.param.chunk) : std::string("all"));
}

class TemplatePairBlockParity : public ::testing::TestWithParam<Case> {};

TEST_P(TemplatePairBlockParity, MatchesReferenceTrace) {
  const Case& c = GetParam();
  const ResolvedCase paths = resolve(c.ref);
  if (paths.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
  ASSERT_FALSE(paths.reference.empty() || paths.params.empty());
  const Hdf5TensorReader ref(paths.reference);
  const WeightStore store = WeightStore::open(paths.params);
  const ModelConfig cfg = ModelConfig::from_weights(store);
  ASSERT_TRUE(cfg.templates);
  const TemplatePairBlock block(ParamScope(store, kStack, 0, cfg.n_template_blocks), cfg);

  const std::string trace = "trace/template_pair_block_0/call_" + std::to_string(c.call) + "/";
  OwnedTensor t(ref, trace + "in_0");
  const std::int64_t n_res = t.view.dim(1);
  ASSERT_EQ(t.view.dim(3), cfg.c_t);

  Arena arena = sized_arena(block.scratch_bytes(n_res, c.chunk) +
                            align_up(static_cast<std::size_t>(n_res * (n_res + 1)) * 4));
  // pair_mask = seq_mask ⊗ seq_mask of this iteration's features.
  const Tensor seq_mask = read_feature(ref, "seq_mask", c.call, DType::f32, arena);
  const Tensor pair_mask = arena.allocate(DType::f32, Shape{n_res, n_res});
  for (std::int64_t i = 0; i < n_res; ++i)
    for (std::int64_t j = 0; j < n_res; ++j)
      pair_mask.at<float>({i, j}) = seq_mask.at<float>({i}) * seq_mask.at<float>({j});

  RunContext ctx;
  ctx.scratch = &arena;
  ctx.chunk = c.chunk;
  ctx.call = c.call;
  const std::size_t used = arena.used();
  block.forward(t.view, pair_mask, ctx);
  EXPECT_EQ(arena.used(), used) << "scratch not released";
  expect_matches(ref, trace + "out", t.view);
}

// Both iterations of the single-recycle files, and the first one chunked.
std::vector<Case> block_cases() {
  std::vector<Case> cases;
  for (const ReferenceCase& ref : with_templates(rec1_cases())) {
    cases.push_back({ref, 0, 0});
    cases.push_back({ref, 1, 0});
    cases.push_back({ref, 0, 5});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Template, TemplatePairBlockParity, ::testing::ValuesIn(block_cases()),
                         case_name);

}  // namespace
}  // namespace cpufold::testing
