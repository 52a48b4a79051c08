// Row-major GEMMs for small per-tile products inside our own parallel loops: oneDNN's jit
// sgemm (fp32, for the few products off the hot paths), and cached matmul primitives for bf16
// inputs with fp32 accumulation and for the hot fp32 products (attention tiles, triangle
// products, the outer product mean's). sgemm mallocs its packing buffers on every call, so a
// product repeated thousands of times belongs on the primitives, with dense operands (oneDNN
// 2.6 takes its brgemm kernels only then). Called inside an OpenMP region, each runs on the
// calling thread.
//
// Who owns what: the cached primitives and their oneDNN scratchpads belong to a GemmCache that
// the caller owns and passes in: for a model run, the RecyclingRun's (RunContext::gemm), for a
// test or a bench its own. Nothing is kept per thread behind the caller's back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memory/dtype.h"

namespace cpufold {

// The matmul primitives of detail::gemm_bf16 and detail::gemm_f32, each with its oneDNN
// scratchpad, made on a shape's first product and reused after. One slot per OpenMP thread (a
// primitive built inside a parallel region runs on one thread, and the attention tiles call the
// products on whichever thread runs the tile), each holding at most detail::kGemmCacheCapacity
// primitives, least recently used dropped. The scratchpads are heap memory outside the run's
// arenas: scratch_bytes() says how much, for a memory plan to add.
class GemmCache {
 public:
  // Slots for omp_get_max_threads() threads: make it after the thread count is set.
  GemmCache();
  // Slots for `threads` OpenMP threads; a product on a thread numbered beyond returns false.
  explicit GemmCache(int threads);
  ~GemmCache();
  GemmCache(const GemmCache&) = delete;
  GemmCache& operator=(const GemmCache&) = delete;

  // The oneDNN scratchpad bytes the primitives hold now, over every slot.
  std::size_t scratch_bytes() const { return scratch_held_.load(); }

  // A product that returned false for want of memory (building its primitive under an
  // address-space limit, see build_primitive) says so here, since the products cannot throw
  // inside a parallel region: callers that saw false call this to throw that BudgetError
  // (exit 4) rather than report a rejected product.
  void note_out_of_memory(const std::string& message);  // the BudgetError's message
  void throw_if_out_of_memory() const;

  struct Slot;  // one thread's primitives (gemm.cpp)
  // The slot of OpenMP thread `thread`; null beyond the threads this cache was made for.
  Slot* slot(int thread);

 private:
  std::atomic<std::size_t> scratch_held_{0};
  std::atomic<bool> out_of_memory_{false};
  std::string out_of_memory_message_;  // written once, by whoever set out_of_memory_ first
  std::vector<std::unique_ptr<Slot>> slots_;
};

// The caller's cache, or, when it keeps none (null), `own` made for this one call.
inline GemmCache& given_or_own(GemmCache* given, std::optional<GemmCache>& own) {
  return given != nullptr ? *given : own.emplace();
}

}  // namespace cpufold

namespace cpufold::detail {

// C[m, n] = alpha * op(A)[m, k] · op(B)[k, n] + beta * C, row-major with leading dimensions
// lda, ldb, ldc; op transposes when trans_a / trans_b. Returns false when oneDNN rejects the
// arguments; it does not throw, because callers run it inside OpenMP regions, which an
// exception must not leave.
[[nodiscard]] bool sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept;

// The same product with bf16 A and B and an fp32 C (fp32 accumulation), on a oneDNN matmul
// primitive (brgemm with AVX512-BF16 or AMX). Primitives are kept in the calling thread's slot
// of `cache`, keyed by shape, strides, alpha, beta and whether the call is inside an OpenMP
// region (a primitive built inside one runs on one thread), so a run of one length builds each
// shape once and a batch of many lengths does not grow it. False when oneDNN cannot build or
// run the product (no bf16 matmul on this CPU, or out of memory while building it), or when
// `cache` has no slot for the calling thread.
[[nodiscard]] bool gemm_bf16(GemmCache& cache, bool trans_a, bool trans_b, std::int64_t m,
                             std::int64_t n, std::int64_t k, float alpha, const bf16* a,
                             std::int64_t lda, const bf16* b, std::int64_t ldb, float beta,
                             float* c, std::int64_t ldc) noexcept;

// The same product on fp32 A and B through a cached oneDNN matmul primitive (brgemm), for
// large products called many times: dnnl_sgemm packs B into a buffer it mallocs on every call,
// which the 1 MiB mmap threshold (memory/heap_policy.h) maps afresh each time, so a call over
// [256 x 8192] operands paid 2,048 page faults; a plan keeps its scratchpad.
[[nodiscard]] bool gemm_f32(GemmCache& cache, bool trans_a, bool trans_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, float alpha, const float* a,
                            std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                            float* c, std::int64_t ldc) noexcept;

// Primitives one GemmCache slot holds at most, for both input types together.
inline constexpr std::size_t kGemmCacheCapacity = 16;

// A leading dimension for a matrix whose rows are `stride` apart: any value >= `cols` is
// accepted when there is a single row, whose stride is meaningless.
inline std::int64_t leading_dim(std::int64_t stride, std::int64_t rows, std::int64_t cols) {
  return rows <= 1 && stride < cols ? cols : stride;
}

}  // namespace cpufold::detail
