// Times multi_head_attention at triangle attention's shapes (AF2 Alg. 13/14): a slice of
// `rows` batch rows of n keys, 4 heads of 32 channels, a [4, n, n] pair bias and a mask.
// Not a test (no assertions).
// Usage: triangle_attention_bench N ROWS [repeats] [f32|bf16] [nopair]
#include <omp.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "memory/arena.h"
#include "ops/attention.h"
#include "ops/gemm.h"

int main(int argc, char** argv) {
  using namespace cpufold;
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 2500;
  const std::int64_t rows = argc > 2 ? std::atoll(argv[2]) : 32;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const bool use_bf16 = argc > 4 && std::strcmp(argv[4], "bf16") == 0;
  const bool no_pair = argc > 5 && std::strcmp(argv[5], "nopair") == 0;  // the bias' cost
  const std::int64_t n_head = 4, c = 32;
  const Shape qkv_shape{rows, n, 3, n_head, c};
  std::vector<float> qkv(static_cast<std::size_t>(qkv_shape.numel())),
      o(static_cast<std::size_t>(rows * n * n_head * c)),
      pair(static_cast<std::size_t>(n_head * n * n)), mask(static_cast<std::size_t>(rows * n));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 0.5f);
  for (float& x : qkv) x = dist(rng);
  for (float& x : pair) x = dist(rng);
  std::vector<bf16> qkv16;
  if (use_bf16) {
    for (float x : qkv) qkv16.emplace_back(x);
  }
  const Tensor in = use_bf16 ? Tensor(qkv16.data(), DType::bf16, qkv_shape)
                             : Tensor(qkv.data(), DType::f32, qkv_shape);
  const Tensor pv(pair.data(), DType::f32, Shape{n_head, n, n});
  const Tensor mv(mask.data(), DType::f32, Shape{rows, n});
  const Tensor ov(o.data(), DType::f32, Shape{rows, n, n_head, c});
  const std::size_t bytes =
      attention_scratch_bytes(n, c, use_bf16 ? DType::bf16 : DType::f32) + (std::size_t{1} << 20);
  Arena arena("bench", dram_tier(), bytes);
  GemmCache gemm;
  const double flops = 4.0 * static_cast<double>(rows * n_head * n * n * c);
  // Process CPU seconds too: the fairer number on a shared machine with one thread (it
  // excludes time other processes held the core; with more threads it counts spin-waiting).
  const auto cpu_seconds = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  double best = 1e30, best_cpu = 1e30;
  for (int r = 0; r <= repeats; ++r) {
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    multi_head_attention(in.select(2, 0), in.select(2, 1), in.select(2, 2),
                         {no_pair ? Tensor() : pv, mv}, ov, arena, 0, &gemm);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    if (r > 0) {  // the first call builds the primitives
      best = std::min(best, s);
      best_cpu = std::min(best_cpu, cpu);
    }
  }
  double sum = 0;
  for (float x : o) sum += x;
  std::printf(
      "N %lld rows %lld %s threads %d: %.3f s, %.1f GFLOP/s; CPU %.3f s, %.1f GFLOP/s per thread "
      "(checksum %.6g)\n",
      static_cast<long long>(n), static_cast<long long>(rows), use_bf16 ? "bf16" : "f32",
      omp_get_max_threads(), best, flops / best * 1e-9, best_cpu, flops / best_cpu * 1e-9, sum);
  return 0;
}
