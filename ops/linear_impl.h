// The inside of Linear (ops/linear.h), shared by the files that implement it: the plan of a
// row shape (a oneDNN matmul and how the epilogue is split), and Linear::Impl, which owns the
// packed weights and the plans. Only ops/linear*.cpp include it.
//   linear_weights.cpp  construction: weights packed (or found in the weight cache)
//   linear_plan.cpp     the fusion ladder, the plan cache and primitive instantiation
//   linear_staged.cpp   the staged path for strided views oneDNN has no jit kernel for
//   linear.cpp          forward(), scratch_bytes() and the accessors
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "ops/linear.h"
#include "ops/recently_used.h"
#include "ops/row_view.h"

namespace cpufold::linear_internal {

using dnnl::memory;
using Dims = memory::dims;

// Everything a primitive depends on besides the weights.
struct PlanKey {
  std::int64_t rows, ld_x, ld_y, ld_mul;
  Activation activation;
  bool multiply, accumulate;
  bool bf16_out = false;  // dst in bf16
  bool operator==(const PlanKey&) const = default;
};

// One matmul primitive and how the epilogue is split between it and our row loop.
struct Plan {
  PlanKey key;
  dnnl::matmul matmul;
  bool with_bias = false;
  bool fused_activation = false;
  bool fused_multiply = false;
  // The matmul writes a contiguous [rows, c_out] scratch buffer that is then added to y,
  // because oneDNN only fuses `sum` when nothing else is (otherwise it falls back to ref).
  bool via_temp = false;
  // Residual add with bias: y += b first, then the gemm accumulates into y (beta = 1), which
  // needs neither a temp buffer nor oneDNN's [rows, c_out] sum scratchpad.
  bool prefill_bias = false;
  // No level of the ladder has a jit kernel for these strides (oneDNN offers some strided or
  // gated cases only in ref code on some ISAs): blocks of rows are copied to contiguous
  // staging buffers, multiplied by the plain contiguous plans below, and the whole epilogue
  // runs in our row loop. Used only through forward(); matmul/args stay empty.
  bool staged = false;
  std::int64_t stage_rows = 0;  // rows per block
  bool fused_sum = false;       // the residual add is oneDNN's `sum` post-op
  std::size_t dnnl_scratch_bytes = 0;
  std::size_t temp_bytes = 0;
  std::size_t src_bytes = 0;  // bf16 compute: the rows converted to bf16 (contiguous)
  // What the staged path would take for these rows (staged_scratch_bytes), which
  // Linear::scratch_bytes() plans for too: sized on its first question and kept here, so the
  // planner's repeated questions about the same row counts cost a lookup, not descriptors.
  std::optional<std::size_t> staged_fallback_bytes;
  // The primitive, its memory objects and argument map: made by the first forward() of this
  // plan, not by planning, which weighs row counts (chunk sizes) a run may never use and would
  // otherwise keep a primitive for each (≈ 30 MiB of heap over the full model's Linears). Then
  // forward() only swaps data handles, so a call allocates nothing.
  memory src, dst, mul, scratchpad;
  std::unordered_map<int, memory> args;

  std::size_t scratch_bytes() const {
    return align_up(dnnl_scratch_bytes) + align_up(temp_bytes) + align_up(src_bytes);
  }
};

// Rows per block of the staged path: bounds its buffers to kStageRows·(c_in + c_out) floats.
inline constexpr std::int64_t kStageRows = 256;

// detail::force_linear_staging's flag.
extern std::atomic<bool> force_staging_for_tests;

inline memory::desc row_desc(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             memory::data_type type = memory::data_type::f32) {
  return memory::desc(Dims{rows, cols}, type, Dims{ld, 1});
}

// Rows [r0, r0 + n) of vx as contiguous bf16 rows at dst (round to nearest even).
void rows_to_bf16(const RowView& vx, std::int64_t r0, std::int64_t n, bf16* dst);

// The oneDNN type of a weight of dtype t (f32 or bf16; WeightsError otherwise).
memory::data_type dnnl_type(DType t, const char* what);

}  // namespace cpufold::linear_internal

namespace cpufold {

using linear_internal::Plan;
using linear_internal::PlanKey;

struct Linear::Impl {
  using memory = dnnl::memory;

  std::int64_t c_in = 0, c_out = 0;
  // f32: plain fp32 matmuls. bf16: weights packed in bf16, each call's input rows converted to
  // a contiguous bf16 scratch buffer; fp32 accumulation, bias, epilogue and output.
  DType compute = DType::f32;
  bool force_staging = false;  // detail::force_linear_staging at construction
  // `compute`'s type in the layout the matmul chose at construction; private, or viewing a shared
  // WeightCache file when its LinearSource named one.
  memory weights;
  memory bias;  // f32 [1, c_out], empty when there is none; private or shared like weights
  std::mutex mutex;
  // This Linear's one cache: its plans with their primitives and sizes, most recently used
  // first, at most kMaxPlans: a batch of many lengths would otherwise keep a primitive (and its
  // jit code) for every row count it ever saw. Shared so that a plan in use survives its
  // eviction by the plans it builds (the staged path's blocks).
  detail::RecentlyUsed<PlanKey, std::shared_ptr<Plan>> plans{kMaxPlans};

  std::shared_ptr<Plan> plan(const PlanKey& key);
  // p.staged_fallback_bytes, sized on first use.
  std::size_t staged_fallback_bytes(Plan& p) const;
  std::shared_ptr<Plan> build_plan(const PlanKey& key);
  // Makes p's primitive and argument map if no forward() has yet (see Plan::matmul).
  void instantiate(Plan& p) const;
  // y = x·W + b for `rows` contiguous rows: what the staged path runs per block.
  PlanKey plain_key(std::int64_t rows) const {
    return {rows, c_in, c_out, 0, Activation::none, false, false};
  }
  bool bf16_compute() const { return compute == DType::bf16; }
  memory::data_type src_type() const {
    return bf16_compute() ? memory::data_type::bf16 : memory::data_type::f32;
  }
  std::size_t src_elem_bytes() const { return bf16_compute() ? sizeof(bf16) : sizeof(float); }
  // Checks `compute` and records it.
  void set_compute(DType t);
  // Scratch of the staged path for `rows` rows: both staging buffers of a block, plus the
  // larger oneDNN scratchpad of the block and tail plans (sized from descriptors only, so
  // planning builds no kernels it may never run).
  std::size_t staged_scratch_bytes(std::int64_t rows) const;
  void forward_staged(const Plan& p, const RowView& vx, const RowView& vy, const RowView& vm,
                      const LinearEpilogue& epilogue, Arena& scratch);
  // The layout oneDNN's matmul wants the weights in, and the bias's.
  memory::desc packed_desc() const;
  memory::desc bias_desc() const;
  // Reorders src (the weight [c_in, c_out] or the bias [c_out], f32 or bf16) into dst.
  void reorder_into(const Tensor& src, memory& dst) const;
  dnnl::matmul::primitive_desc try_desc(const PlanKey& key, bool with_bias, bool activation,
                                        bool multiply, bool sum) const;
  // Without a residual add fused as `sum`: as much of the epilogue as oneDNN runs in jit code
  // (activation and gate, activation, nothing), the rest left to our row loop; p's flags say
  // which. Its descriptor may still be a reference kernel (none was fast).
  dnnl::matmul::primitive_desc fusion_ladder(Plan& p, bool has_bias) const;
  // "Linear [rows x c_in] x [c_in x c_out]", for messages.
  std::string describe(const PlanKey& key) const;
};

}  // namespace cpufold
