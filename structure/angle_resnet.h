// The structure module's torsion-angle head (AF2 supplement Alg. 20 lines 11-14; Haiku scope
// `rigid_sidechain`): a small residual MLP over the current and the initial single
// representation that predicts (sin, cos) pairs for the 7 torsion angles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer_list.h"
#include "memory/tensor.h"
#include "ops/linear.h"
#include "ops/param_scope.h"

namespace cpufold {

// AF2 Alg. 20 lines 11-14
class AngleResnet {
 public:
  // AF2-DEVIATION: OpenFold's structure_module.epsilon (the reference): |a|² is clamped below by
  // 1e-8 when normalising, where AF2's l2_normalize uses 1e-12; only near-zero vectors differ.
  static constexpr float kEps = 1e-8f;

  // scope: `structure_module/fold_iteration/rigid_sidechain`, holding input_projection and
  // input_projection_1 [c_s, c_resnet], resblock1/resblock2 (block 0) and resblock1_1/resblock2_1
  // (block 1) [c_resnet, c_resnet], unnormalized_angles [c_resnet, 2·n_torsions]; all biased.
  AngleResnet(const ParamScope& scope, std::int64_t c_s, std::int64_t c_resnet,
              std::int64_t n_torsions);

  // The term of the initial single representation, the same for every layer (so computed once):
  // dst = input_projection_1(relu(s_initial)). s_initial: [n_res, c_s]; dst: [n_res, c_resnet].
  void project_initial(const Tensor& s_initial, const Tensor& dst, Arena& scratch) const;

  // s: [n_res, c_s] the current single; initial: [n_res, c_resnet] from project_initial.
  // unnormalized, angles: [n_res, n_torsions, 2] (contiguous), (sin, cos) pairs before and
  // after scaling to unit length.
  void forward(const Tensor& s, const Tensor& initial, const Tensor& unnormalized,
               const Tensor& angles, Arena& scratch) const;

  std::size_t scratch_bytes(std::int64_t n_res) const;

 private:
  // forward()'s and project_initial()'s buffers, each stated once in the list that both
  // allocates and sizes them.
  struct Held {
    Tensor a;  // the activations the residual blocks update [n, c_resnet]
  };
  struct Input {
    Tensor relu;  // relu of a projection's input [n, c_in], which AF2 leaves unchanged
  };
  struct ResBlock {
    Tensor relu;    // relu(a) [n, c_resnet]
    Tensor hidden;  // [n, c_resnet]
  };
  BufferList<Held> held_buffers(std::int64_t n) const;
  static BufferList<Input> input_buffers(std::int64_t n, std::int64_t c_in);
  BufferList<ResBlock> res_block_buffers(std::int64_t n) const;

  std::int64_t c_s_, c_resnet_, n_torsions_;
  Linear input_projection_;                    // [c_s] -> [c_resnet], on relu(s)
  Linear input_projection_1_;                  // [c_s] -> [c_resnet], on relu(s_initial)
  std::vector<Linear> resblock1_, resblock2_;  // per residual block: relu fused into the first
  Linear unnormalized_angles_;                 // [c_resnet] -> [2·n_torsions]
};

}  // namespace cpufold
