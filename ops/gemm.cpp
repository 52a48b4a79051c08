#include "ops/gemm.h"

#include <oneapi/dnnl/dnnl.h>

namespace cpufold::detail {

bool sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) noexcept {
  if (k == 0) {
    // BLAS defines C = beta·C for an empty inner dimension (e.g. an outer product mean over zero
    // MSA rows), but oneDNN 2.6's dnnl_sgemm returns without touching C.
    if (m < 0 || n < 0 || (m > 0 && ldc < n)) return false;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return true;
  }
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta,
                    c, ldc) == dnnl_success;
}

}  // namespace cpufold::detail
