#include "evoformer/pair_stack_updates.h"

#include <algorithm>

namespace cpufold {

PairStackUpdates::PairStackUpdates(const ParamScope& block, std::int64_t c_z,
                                   const AttentionDims& attention, std::int64_t c_hidden_mul,
                                   std::int64_t transition_factor, Order order)
    : order_(order),
      outgoing_(block / "triangle_multiplication_outgoing", c_z, c_hidden_mul,
                TriangleMultiplication::Direction::outgoing),
      incoming_(block / "triangle_multiplication_incoming", c_z, c_hidden_mul,
                TriangleMultiplication::Direction::incoming),
      starting_(block / "triangle_attention_starting_node", c_z, attention,
                TriangleAttention::Node::starting),
      ending_(block / "triangle_attention_ending_node", c_z, attention,
              TriangleAttention::Node::ending),
      transition_(block / "pair_transition", c_z, transition_factor) {}

void PairStackUpdates::forward(const Tensor& z, const Tensor& pair_mask,
                               const RunContext& ctx) const {
  auto multiply = [&] {
    ctx.module("triangle_multiplication_outgoing");
    outgoing_.forward(z, pair_mask, ctx);
    ctx.module("triangle_multiplication_incoming");
    incoming_.forward(z, pair_mask, ctx);
  };
  auto attend = [&] {
    ctx.module("triangle_attention_starting_node");
    starting_.forward(z, pair_mask, ctx);
    ctx.module("triangle_attention_ending_node");
    ending_.forward(z, pair_mask, ctx);
  };
  if (order_ == Order::multiplication_first) {
    multiply();
    attend();
  } else {
    attend();
    multiply();
  }
  ctx.module("pair_transition");
  transition_.forward(z, Tensor(), ctx);
}

std::size_t PairStackUpdates::scratch_bytes(std::int64_t n_res, std::int64_t chunk,
                                            bool edge_apart) const {
  return std::max({outgoing_.scratch_bytes(n_res, chunk, edge_apart),
                   incoming_.scratch_bytes(n_res, chunk, edge_apart),
                   starting_.scratch_bytes(n_res, chunk), ending_.scratch_bytes(n_res, chunk),
                   transition_.scratch_bytes(n_res, n_res, chunk, false)});
}

std::size_t PairStackUpdates::edge_bytes(std::int64_t n_res) const {
  return std::max(outgoing_.edge_bytes(n_res), incoming_.edge_bytes(n_res));
}

}  // namespace cpufold
