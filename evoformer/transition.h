// The two-layer feed-forward transition of AF2's MSA and pair stacks (supplement Alg. 9
// MSATransition and Alg. 15 PairTransition are the same module with different widths).
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 9 and Alg. 15
class Transition {
 public:
  // scope: e.g. `evoformer/evoformer_iteration/msa_transition` or `.../pair_transition` (or the
  // extra-MSA / template stacks'), with its block index; holds input_layer_norm [c],
  // transition1 [c, factor·c] + bias, transition2 [factor·c, c] + bias.
  Transition(const ParamScope& scope, std::int64_t c, std::int64_t factor);

  // x: [n_0, ..., c] (contiguous rows: an MSA [n_seq, n_res, c_m] or a pair [n_res, n_res, c_z]);
  // updated in place: x += mask ⊙ Linear2(relu(Linear1(LayerNorm(x)))).
  // mask: x's shape without the last axis (f32, any strides), or empty for no mask. OpenFold
  // multiplies the update by the MSA / pair mask only when its `_mask_trans` option is on; AF2
  // never does. The reference files use _mask_trans = False, so the stacks pass an empty mask
  // to match them; with 0/1 masks and no padding both give the same numbers.
  // ctx.chunk entries of the first axis at a time (<= 0: all), so the factor·c-wide hidden
  // activation is bounded by the chunk. x may be bf16 (a bf16 stored MSA, with bf16 compute
  // and no mask): the update is added and rounded once.
  void forward(const Tensor& x, const Tensor& mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes for x of `n_first` x `n_rest` rows of type x_type, with or
  // without a mask.
  std::size_t scratch_bytes(std::int64_t n_first, std::int64_t n_rest, std::int64_t chunk,
                            bool masked, DType x_type = DType::f32) const;

  std::int64_t channels() const { return c_; }
  std::int64_t hidden() const { return c_ * factor_; }

 private:
  // A chunk's buffers, stated once in the list that both allocates and sizes them.
  struct Buffers {
    Tensor xn;  // LayerNorm(x) [rows, c]; a masked chunk's update once h is computed
    Tensor h;   // the hidden layer [rows, factor·c]
  };
  // Both bf16 when `narrow` (narrow_hidden), else f32.
  BufferList<Buffers> buffers(std::int64_t rows, bool narrow) const;

  // bf16 compute without a mask: the normalised input and the hidden layer stay bf16.
  bool narrow_hidden(bool masked) const;
  // InternalError for a shape, mask or type forward() does not take.
  void check_inputs(const Tensor& x, const Tensor& mask) const;
  // One chunk xs of `rows` rows: in bf16 (narrow_hidden), or in f32 with the chunk's mask ms
  // (empty: none).
  void forward_narrow(const Tensor& xs, std::int64_t rows, Arena& arena) const;
  void forward_f32(const Tensor& xs, const Tensor& ms, std::int64_t rows, Arena& arena) const;

  std::int64_t c_, factor_;
  LayerNorm norm_;
  Linear transition1_;  // [c] -> [factor·c], relu fused
  Linear transition2_;  // [factor·c] -> [c], accumulated into x
};

}  // namespace cpufold
