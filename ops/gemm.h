// Row-major GEMMs for small per-tile products inside our own parallel loops: oneDNN's jit
// sgemm (fp32), and bf16 inputs with fp32 accumulation through cached matmul primitives; and
// the same cached primitives for fp32 products repeated with one shape (the outer product
// mean's). Called inside an OpenMP region, each runs on the calling thread.
#pragma once

#include <cstdint>

#include "memory/dtype.h"

namespace cpufold::detail {

// C[m, n] = alpha * op(A)[m, k] · op(B)[k, n] + beta * C, row-major with leading dimensions
// lda, ldb, ldc; op transposes when trans_a / trans_b. Returns false when oneDNN rejects the
// arguments; it does not throw, because callers run it inside OpenMP regions, which an
// exception must not leave.
[[nodiscard]] bool sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept;

// The same product with bf16 A and B and an fp32 C (fp32 accumulation), on a oneDNN matmul
// primitive (brgemm with AVX512-BF16 or AMX). Primitives are kept per thread in a small cache
// keyed by shape, strides, alpha, beta and whether the call is inside an OpenMP region (a
// primitive built inside one runs on one thread), so a run of one length builds each shape
// once and a batch of many lengths does not grow it. False when oneDNN cannot build or run
// the product (no bf16 matmul on this CPU, or out of memory while building it).
[[nodiscard]] bool gemm_bf16(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                             std::int64_t k, float alpha, const bf16* a, std::int64_t lda,
                             const bf16* b, std::int64_t ldb, float beta, float* c,
                             std::int64_t ldc) noexcept;

// The same product on fp32 A and B through a cached oneDNN matmul primitive (brgemm), for
// large products called many times: dnnl_sgemm packs B into a buffer it mallocs on every call,
// which the 1 MiB mmap threshold (memory/heap_policy.h) maps afresh each time, so a call over
// [256 x 8192] operands paid 2,048 page faults; a plan keeps its scratchpad.
[[nodiscard]] bool gemm_f32(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                            std::int64_t k, float alpha, const float* a, std::int64_t lda,
                            const float* b, std::int64_t ldb, float beta, float* c,
                            std::int64_t ldc) noexcept;

// Primitives a thread's cache of gemm_bf16 and gemm_f32 plans holds at most.
inline constexpr std::size_t kGemmCacheCapacity = 16;

// The oneDNN scratchpad bytes those caches hold now, over every thread: heap memory outside the
// run's arenas, bounded by kGemmCacheCapacity plans per thread (what a memory plan must add).
std::size_t gemm_scratch_bytes();

// A leading dimension for a matrix whose rows are `stride` apart: any value >= `cols` is
// accepted when there is a single row, whose stride is meaningless.
inline std::int64_t leading_dim(std::int64_t stride, std::int64_t rows, std::int64_t cols) {
  return rows <= 1 && stride < cols ? cols : stride;
}

}  // namespace cpufold::detail
