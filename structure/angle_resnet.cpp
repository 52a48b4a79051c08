#include "structure/angle_resnet.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "memory/tensor_copy.h"
#include "ops/activations.h"

namespace cpufold {
namespace {

constexpr int kResBlocks = 2;  // AF2 num_residual_block

// relu(src) into dst: AF2 applies relu to the inputs of the projections without changing the
// activations themselves.
const Tensor& relu_copy(const Tensor& src, const Tensor& dst) {
  copy_tensor(src, dst);
  relu_inplace(dst);
  return dst;
}

}  // namespace

AngleResnet::AngleResnet(const ParamScope& scope, std::int64_t c_s, std::int64_t c_resnet,
                         std::int64_t n_torsions)
    : c_s_(c_s),
      c_resnet_(c_resnet),
      n_torsions_(n_torsions),
      input_projection_((scope / "input_projection").linear({c_s, c_resnet})),
      input_projection_1_((scope / "input_projection_1").linear({c_s, c_resnet})),
      unnormalized_angles_((scope / "unnormalized_angles").linear({c_resnet, 2 * n_torsions})) {
  // Haiku numbers repeated module names: resblock1, resblock1_1, ...
  constexpr const char* kNames[kResBlocks][2] = {{"resblock1", "resblock2"},
                                                 {"resblock1_1", "resblock2_1"}};
  for (const auto& names : kNames) {
    resblock1_.push_back((scope / names[0]).linear({c_resnet, c_resnet}));
    resblock2_.push_back((scope / names[1]).linear({c_resnet, c_resnet}));
  }
}

void AngleResnet::project_initial(const Tensor& s_initial, const Tensor& dst,
                                  Arena& scratch) const {
  ArenaScope scope(scratch);
  const Input in = input_buffers(s_initial.dim(0), c_s_).allocate(scratch);
  input_projection_1_.forward(relu_copy(s_initial, in.relu), dst, scratch);
}

void AngleResnet::forward(const Tensor& s, const Tensor& initial, const Tensor& unnormalized,
                          const Tensor& angles, Arena& scratch) const {
  const std::int64_t n = s.rank() == 2 ? s.dim(0) : -1;
  const Shape angle_shape{n, n_torsions_, 2};
  if (!(s.shape() == Shape{n, c_s_}) || !(initial.shape() == Shape{n, c_resnet_}) ||
      !(unnormalized.shape() == angle_shape) || !(angles.shape() == angle_shape) ||
      !unnormalized.is_contiguous() || !angles.is_contiguous()) {
    throw InternalError("AngleResnet given s " + s.describe() + ", initial " + initial.describe() +
                        ", angles " + unnormalized.describe() + " and " + angles.describe());
  }
  if (n == 0) return;
  ArenaScope scope(scratch);
  // a = input_projection(relu(s)) + input_projection_1(relu(s_initial)) (Alg. 20 line 11).
  const Tensor a = held_buffers(n).allocate(scratch).a;
  copy_tensor(initial, a);
  LinearEpilogue accumulate;
  accumulate.accumulate = true;
  LinearEpilogue relu;
  relu.activation = Activation::relu;
  {
    ArenaScope step(scratch);
    const Input in = input_buffers(n, c_s_).allocate(scratch);
    input_projection_.forward(relu_copy(s, in.relu), a, scratch, accumulate);
  }
  // a += Linear(relu(Linear(relu(a)))), twice (Alg. 20 lines 12-13).
  for (int b = 0; b < kResBlocks; ++b) {
    ArenaScope step(scratch);
    const ResBlock w = res_block_buffers(n).allocate(scratch);
    resblock1_[static_cast<std::size_t>(b)].forward(relu_copy(a, w.relu), w.hidden, scratch, relu);
    resblock2_[static_cast<std::size_t>(b)].forward(w.hidden, a, scratch, accumulate);
  }
  const Tensor flat = unnormalized.reshape(Shape{n, 2 * n_torsions_});
  const Input in = input_buffers(n, c_resnet_).allocate(scratch);
  unnormalized_angles_.forward(relu_copy(a, in.relu), flat, scratch);
  // Alg. 20 line 14 (OpenFold: a / sqrt(max(|a|², eps))).
  const float* u = unnormalized.data_as<float>();
  float* out = angles.data_as<float>();
  for (std::int64_t k = 0; k < n * n_torsions_; ++k) {
    const float sin = u[2 * k], cos = u[2 * k + 1];
    const float denom = std::sqrt(std::max(sin * sin + cos * cos, kEps));
    out[2 * k] = sin / denom;
    out[2 * k + 1] = cos / denom;
  }
}

BufferList<AngleResnet::Held> AngleResnet::held_buffers(std::int64_t n) const {
  return {{&Held::a, DType::f32, Shape{n, c_resnet_}}};
}

BufferList<AngleResnet::Input> AngleResnet::input_buffers(std::int64_t n, std::int64_t c_in) {
  return {{&Input::relu, DType::f32, Shape{n, c_in}}};
}

BufferList<AngleResnet::ResBlock> AngleResnet::res_block_buffers(std::int64_t n) const {
  return {{&ResBlock::relu, DType::f32, Shape{n, c_resnet_}},
          {&ResBlock::hidden, DType::f32, Shape{n, c_resnet_}}};
}

std::size_t AngleResnet::scratch_bytes(std::int64_t n_res) const {
  const EpilogueKind accumulate{.accumulate = true};
  const EpilogueKind relu{.activation = Activation::relu};
  // project_initial(), then forward(): a, and one of its three kinds of step at a time.
  const std::size_t initial =
      input_buffers(n_res, c_s_).bytes() + input_projection_1_.scratch_bytes(n_res);
  std::size_t res_linears = 0;
  for (int b = 0; b < kResBlocks; ++b) {
    res_linears =
        std::max({res_linears, resblock1_[static_cast<std::size_t>(b)].scratch_bytes(n_res, relu),
                  resblock2_[static_cast<std::size_t>(b)].scratch_bytes(n_res, accumulate)});
  }
  const std::size_t step = std::max(
      {input_buffers(n_res, c_s_).bytes() + input_projection_.scratch_bytes(n_res, accumulate),
       res_block_buffers(n_res).bytes() + res_linears,
       input_buffers(n_res, c_resnet_).bytes() + unnormalized_angles_.scratch_bytes(n_res)});
  return std::max(initial, held_buffers(n_res).bytes() + step);
}

}  // namespace cpufold
