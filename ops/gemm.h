// Row-major single-precision GEMM on oneDNN's jit sgemm, for small per-tile products inside
// our own parallel loops (called inside an OpenMP region it runs on the calling thread).
#pragma once

#include <cstdint>

namespace cpufold::detail {

// C[m, n] = alpha * op(A)[m, k] · op(B)[k, n] + beta * C, row-major with leading dimensions
// lda, ldb, ldc; op transposes when trans_a / trans_b. Returns false when oneDNN rejects the
// arguments; it does not throw, because callers run it inside OpenMP regions, which an
// exception must not leave.
[[nodiscard]] bool sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept;

// A leading dimension for a matrix whose rows are `stride` apart: any value >= `cols` is
// accepted when there is a single row, whose stride is meaningless.
inline std::int64_t leading_dim(std::int64_t stride, std::int64_t rows, std::int64_t cols) {
  return rows <= 1 && stride < cols ? cols : stride;
}

}  // namespace cpufold::detail
