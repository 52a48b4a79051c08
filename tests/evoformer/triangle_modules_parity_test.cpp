// Parity of the triangle modules (AF2 Alg. 11-14) with the reference's replay of Evoformer
// block 0 at recycling iteration 0: each step reads the pair state before it and must give
// both the residual update and the state after it, unchunked and in slabs of 1 and 3 rows.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "ops/param_scope.h"
#include "tests/evoformer/block0_step_parity.h"

namespace cpufold::testing {
namespace {

// A triangle step: `Module` built from block 0's `module` scope with c_z, its width or dims
// (`options` of the config) and its direction or node; it updates z under the pair mask.
template <typename Module, typename Options, typename Kind>
BlockStep triangle_step(const char* name, const char* input, const char* update, const char* state,
                        const char* module, Options ModelConfig::*options, Kind kind) {
  return {name,
          input,
          input,
          update,
          state,
          {0, 1, 3},
          [module, options, kind](const ParamScope& block, const ModelConfig& cfg) {
            const auto tri =
                std::make_shared<const Module>(block / module, cfg.c_z, cfg.*options, kind);
            return StepModule{[tri](const StepInputs& in, std::int64_t chunk) {
                                return tri->scratch_bytes(in.n_res, chunk);
                              },
                              [tri](const StepInputs& in, const Tensor& z, const RunContext& ctx) {
                                tri->forward(z, in.pair_mask, ctx);
                              }};
          }};
}

const std::vector<BlockStep> kTriangleSteps = {
    triangle_step<TriangleMultiplication>(
        "TriMulOutgoing", "z_04", "upd_05_triangle_multiplication_outgoing", "z_05",
        "triangle_multiplication_outgoing", &ModelConfig::c_hidden_tri_mul,
        TriangleMultiplication::Direction::outgoing),
    triangle_step<TriangleMultiplication>(
        "TriMulIncoming", "z_05", "upd_06_triangle_multiplication_incoming", "z_06",
        "triangle_multiplication_incoming", &ModelConfig::c_hidden_tri_mul,
        TriangleMultiplication::Direction::incoming),
    triangle_step<TriangleAttention>(
        "TriAttStarting", "z_06", "upd_07_triangle_attention_starting_node", "z_07",
        "triangle_attention_starting_node", &ModelConfig::triangle_attention,
        TriangleAttention::Node::starting),
    triangle_step<TriangleAttention>(
        "TriAttEnding", "z_07", "upd_08_triangle_attention_ending_node", "z_08",
        "triangle_attention_ending_node", &ModelConfig::triangle_attention,
        TriangleAttention::Node::ending),
};

class TriangleModuleParity : public Block0StepParity {};

TEST_P(TriangleModuleParity, Block0StepMatchesReference) {
  check_step();
}

INSTANTIATE_TEST_SUITE_P(Evoformer, TriangleModuleParity,
                         ::testing::ValuesIn(step_cases(kTriangleSteps)), step_case_name);

}  // namespace
}  // namespace cpufold::testing
