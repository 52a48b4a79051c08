// Linear: y = x·W + b over the last axis, on a oneDNN matmul, with fused epilogues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "memory/arena.h"
#include "memory/tensor.h"
#include "ops/activations.h"

namespace cpufold {

class WeightCache;

// Where a Linear's packed weights live and what it computes in. Given to each Linear (modules
// take it from their ParamScope), never read from thread state.
struct LinearSource {
  // The shared file of packed weights (ops/weight_cache.h) the Linear maps its weights from,
  // or adds them to; null: private memory.
  WeightCache* cache = nullptr;
  DType precision = DType::f32;  // the Linear's `compute` (see Linear)
};

// What happens to x·W + b before it lands in y, in this order:
//   t = activation(x·W + b);  t *= multiply (if given);  y = t, or y += t when accumulating.
// AF2's gate is {sigmoid, multiply = attention output}; a residual update is {accumulate}.
// What an epilogue does, without its tensors: all that planning (scratch_bytes) depends on, so
// a module can plan a gated projection before the gate exists.
struct EpilogueKind {
  Activation activation = Activation::none;
  bool gated = false;       // a `multiply` tensor will be given
  bool accumulate = false;  // y += t
  bool bf16_out = false;    // y is bf16 (see forward)
  bool bf16_in = false;     // x is bf16 (see forward): planned without the converted copy
  bool operator==(const EpilogueKind&) const = default;
};

struct LinearEpilogue {
  Activation activation = Activation::none;
  Tensor multiply;          // the gate, [..., c_out axes] like y; must not overlap y; empty: none
  bool accumulate = false;  // y += t (residual add) instead of y = t

  EpilogueKind kind() const {
    return {.activation = activation, .gated = !multiply.empty(), .accumulate = accumulate};
  }
};

// The weights of a Linear, made only when they must be reordered: when a WeightCache already
// holds them (matched by `identity`), `produce` never runs and its sources are never read.
struct DeferredWeights {
  std::int64_t c_in = 0, c_out = 0;
  bool bias = false;
  std::uint64_t identity = 0;  // equal for equal values (built from weight_identity)
  // Writes w [c_in, c_out] and, when `bias`, b [c_out], both f32.
  std::function<void(std::span<float> w, std::span<float> b)> produce;
  LinearSource source;  // the cache to look in and the compute precision
};

class Linear {
 public:
  // w: [c_in axes..., c_out axes...], contiguous, in AF2's layout (input axes first); the first
  // `in_axes` axes form c_in, the rest c_out, so query_w [c_in, n_head, c_hidden] needs no
  // reshape (in_axes = 1) and output_w [n_head, c_hidden, c_out] takes in_axes = 2.
  // bias: c_out elements of any shape, or an empty Tensor for none. f32 or bf16 inputs.
  // Weights are reordered once here into memory this object owns, or found in (else added to)
  // source.cache; w may be unmapped after. source.precision, the compute: f32, or bf16
  // (weights packed in bf16, inputs rounded to bf16 per call into scratch, fp32 accumulation,
  // bias, epilogue and output); bf16 throws InputError where oneDNN has no bf16 matmul
  // (bf16_support()).
  Linear(const Tensor& w, const Tensor& bias, int in_axes, const LinearSource& source);
  // Private weights computing in `compute`.
  Linear(const Tensor& w, const Tensor& bias, int in_axes = 1, DType compute = DType::f32)
      : Linear(w, bias, in_axes, LinearSource{nullptr, compute}) {}
  explicit Linear(const DeferredWeights& weights);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;

  // x: [..., c_in axes] -> y: [..., c_out axes], the same rows; the trailing axes that make up
  // c_in (c_out) must be contiguous, so y may be [n, n_head, c_hidden] for query_w. Both may be
  // strided views whose leading axes collapse to one row stride (e.g. y a column range of a
  // wider buffer). y must not overlap x. Scratch (oneDNN's scratchpad, for bf16 compute the
  // input rows in bf16, and, for accumulate with anything else fused, a [rows, c_out] buffer)
  // comes from `scratch` and is
  // released on return. A primitive is built on the first call for each row count and stride
  // combination and reused after; the kMaxPlans most recently used are kept, so memory stays
  // flat over a batch of many lengths. Calls on one object are serialised by a mutex.
  // With bf16 compute, y may be bf16 contiguous rows for a plain projection, an activation
  // (optionally gated) or a residual add: oneDNN rounds act(x·W + b) (· gate) (+ y) to bf16 as
  // it stores (the attention's q, k, v and its gated output, which the output projection would
  // round to bf16 anyway; a transition's hidden layer; a bf16 stored MSA); plan it with
  // EpilogueKind{.bf16_out = true} (and .activation, .gated or .accumulate). x may be bf16
  // contiguous rows, read in place (plan with .bf16_in = true).
  void forward(const Tensor& x, const Tensor& y, Arena& scratch,
               const LinearEpilogue& epilogue = {}) const;

  // Scratch bytes forward() takes for `rows` rows with an epilogue of this kind, contiguous or
  // strided: the larger of the direct plan and the staged fallback (contiguous copies of row
  // blocks and an unfused epilogue) that strided views take when oneDNN has no jit kernel.
  std::size_t scratch_bytes(std::int64_t rows, const EpilogueKind& kind = {}) const;

  std::int64_t c_in() const;
  std::int64_t c_out() const;
  DType compute() const;
  bool has_bias() const;

  // Plans this object holds (each with its primitive and argument map once forward() ran it;
  // scratch_bytes() sizes plans from descriptors only): at most kMaxPlans. A run
  // uses few per object: a full chunk of rows, the remainder, the staged path's blocks.
  static constexpr std::size_t kMaxPlans = 8;
  std::size_t plan_count() const;
  // Of those, the plans that hold a primitive: only row counts forward() ran.
  std::size_t primitive_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

namespace detail {
// Tests only: strided forward() calls on Linear objects constructed from now on take the staged
// fallback even where oneDNN has a jit kernel, so the fallback is tested on every ISA.
void force_linear_staging(bool on);
}  // namespace detail

}  // namespace cpufold
