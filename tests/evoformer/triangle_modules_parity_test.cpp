// Parity of the triangle modules (AF2 Alg. 11-14) with the reference's replay of Evoformer
// block 0 at recycling iteration 0: each step reads the pair state before it and must give
// both the residual update and the state after it, unchunked and in slabs of 1 and 3 rows.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "ops/param_scope.h"
#include "tests/evoformer/block0_step_parity.h"

namespace cpufold::testing {
namespace {

using Direction = TriangleMultiplication::Direction;
using Node = TriangleAttention::Node;

// Block 0's parameter scope of each triangle module, and its width or attention dims.
std::string module_name(Direction d) {
  return d == Direction::outgoing ? "triangle_multiplication_outgoing"
                                  : "triangle_multiplication_incoming";
}
std::string module_name(Node n) {
  return n == Node::starting ? "triangle_attention_starting_node"
                             : "triangle_attention_ending_node";
}
std::int64_t width(const ModelConfig& cfg, Direction) {
  return cfg.c_hidden_tri_mul;
}
AttentionDims width(const ModelConfig& cfg, Node) {
  return cfg.triangle_attention;
}

// Step `number` of block 0, a triangle module in direction or node `kind`: it updates
// z_0{number-1} into z_0{number} under the pair mask.
template <typename Module, typename Kind>
BlockStep triangle_step(int number, const char* name, Kind kind) {
  const std::string module = module_name(kind), before = "z_0" + std::to_string(number - 1);
  return {name,
          before,
          before,
          "upd_0" + std::to_string(number) + "_" + module,
          "z_0" + std::to_string(number),
          {0, 1, 3},
          [module, kind](const ParamScope& block, const ModelConfig& cfg) {
            return step_module(
                std::make_shared<const Module>(block / module, cfg.c_z, width(cfg, kind), kind),
                [](const Module& tri, const StepInputs& in, std::int64_t chunk) {
                  return tri.scratch_bytes(in.n_res, chunk);
                },
                [](const Module& tri, const StepInputs& in, const Tensor& z,
                   const RunContext& ctx) { tri.forward(z, in.pair_mask, ctx); });
          }};
}

// Steps 5 to 8, in the block's order (AF2 Alg. 11, 12, 13, 14).
const std::vector<BlockStep> kTriangleSteps = {
    triangle_step<TriangleMultiplication>(5, "TriMulOutgoing", Direction::outgoing),
    triangle_step<TriangleMultiplication>(6, "TriMulIncoming", Direction::incoming),
    triangle_step<TriangleAttention>(7, "TriAttStarting", Node::starting),
    triangle_step<TriangleAttention>(8, "TriAttEnding", Node::ending)};

class TriangleModuleParity : public Block0StepParity {};

TEST_P(TriangleModuleParity, Block0StepMatchesReference) {
  check_step();
}

INSTANTIATE_TEST_SUITE_P(Evoformer, TriangleModuleParity,
                         ::testing::ValuesIn(step_cases(kTriangleSteps)), step_case_name);

}  // namespace
}  // namespace cpufold::testing
