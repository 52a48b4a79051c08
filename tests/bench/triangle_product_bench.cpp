// Times the triangle multiplication's channel products (AF2 Alg. 11/12 line 4) as the module
// runs them: one single-threaded [rows, n] x [n, n] fp32 product per channel, channels spread
// over the threads, with B read transposed ("nt", the layout whose k index is contiguous in
// each row of B) or not ("nn"). Not a test (no assertions).
// Usage: triangle_product_bench N ROWS [repeats] [channels]
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ops/gemm.h"

int main(int argc, char** argv) {
  using namespace cpufold;
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 2500;
  const std::int64_t rows = argc > 2 ? std::atoll(argv[2]) : 156;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::int64_t channels = argc > 4 ? std::atoll(argv[4]) : 16;
  std::vector<float> right(static_cast<std::size_t>(channels * n * n)),
      left(static_cast<std::size_t>(channels * rows * n)),
      out(static_cast<std::size_t>(omp_get_max_threads() * rows * n));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 0.5f);
  for (float& x : right) x = dist(rng);
  for (float& x : left) x = dist(rng);
  GemmCache gemm;
  const double flops = 2.0 * static_cast<double>(channels * rows * n * n);
  for (const bool trans_b : {true, false, true, false}) {
    double best = 1e30;
    for (int r = 0; r <= repeats; ++r) {
      std::atomic<bool> ok = true;
      const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t ch = 0; ch < channels; ++ch) {
        float* p = out.data() + omp_get_thread_num() * rows * n;
        if (!detail::gemm_f32(gemm, false, trans_b, rows, n, n, 1.f, left.data() + ch * rows * n, n,
                              right.data() + ch * n * n, n, 0.f, p, n)) {
          ok = false;
        }
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!ok) {
        std::fprintf(stderr, "gemm_f32 failed\n");
        return 1;
      }
      if (r > 0 && s < best) best = s;
    }
    std::printf("n %lld rows %lld %s: %.1f GFLOP/s (best of %d, %d threads)\n",
                static_cast<long long>(n), static_cast<long long>(rows), trans_b ? "nt" : "nn",
                flops / best * 1e-9, repeats, omp_get_max_threads());
  }
  return 0;
}
