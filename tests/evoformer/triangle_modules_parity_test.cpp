// Parity of the triangle modules (AF2 Alg. 11-14) with the reference's replay of Evoformer
// block 0 at recycling iteration 0: each step reads the pair state before it and must give
// both the residual update and the state after it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "tests/evoformer/block0_step_parity.h"

namespace cpufold::testing {
namespace {

// A triangle multiplication step (ctx.chunk is not used by the module: one unchunked run).
BlockStep tri_mul_step(const char* name, const char* input, const char* update, const char* state,
                       const char* module, TriangleMultiplication::Direction direction) {
  return {name,
          input,
          input,
          update,
          state,
          {0},
          [module, direction](const ParamScope& block, const ModelConfig& cfg) {
            const auto tri_mul = std::make_shared<const TriangleMultiplication>(
                block / module, cfg.c_z, cfg.c_hidden_tri_mul, direction);
            return StepModule{
                [tri_mul](const StepInputs& in, std::int64_t) {
                  return tri_mul->scratch_bytes(in.n_res);
                },
                [tri_mul](const StepInputs& in, const Tensor& z, const RunContext& ctx) {
                  tri_mul->forward(z, in.pair_mask, ctx);
                }};
          }};
}

BlockStep tri_att_step(const char* name, const char* input, const char* update, const char* state,
                       const char* module, TriangleAttention::Node node) {
  return {name,
          input,
          input,
          update,
          state,
          {0},
          [module, node](const ParamScope& block, const ModelConfig& cfg) {
            const auto tri_att = std::make_shared<const TriangleAttention>(
                block / module, cfg.c_z, cfg.triangle_attention, node);
            return StepModule{
                [tri_att](const StepInputs& in, std::int64_t chunk) {
                  return tri_att->scratch_bytes(in.n_res, chunk);
                },
                [tri_att](const StepInputs& in, const Tensor& z, const RunContext& ctx) {
                  tri_att->forward(z, in.pair_mask, ctx);
                }};
          }};
}

const std::vector<BlockStep> kTriangleSteps = {
    tri_mul_step("TriMulOutgoing", "z_04", "upd_05_triangle_multiplication_outgoing", "z_05",
                 "triangle_multiplication_outgoing", TriangleMultiplication::Direction::outgoing),
    tri_mul_step("TriMulIncoming", "z_05", "upd_06_triangle_multiplication_incoming", "z_06",
                 "triangle_multiplication_incoming", TriangleMultiplication::Direction::incoming),
    tri_att_step("TriAttStarting", "z_06", "upd_07_triangle_attention_starting_node", "z_07",
                 "triangle_attention_starting_node", TriangleAttention::Node::starting),
    tri_att_step("TriAttEnding", "z_07", "upd_08_triangle_attention_ending_node", "z_08",
                 "triangle_attention_ending_node", TriangleAttention::Node::ending),
};

class TriangleModuleParity : public Block0StepParity {};

TEST_P(TriangleModuleParity, Block0StepMatchesReference) {
  check_step();
}

INSTANTIATE_TEST_SUITE_P(Evoformer, TriangleModuleParity,
                         ::testing::ValuesIn(step_cases(kTriangleSteps)), step_case_name);

}  // namespace
}  // namespace cpufold::testing
