#include "ops/gemm.h"

#include <gtest/gtest.h>

#include <omp.h>
#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

#include "ops/compute_precision.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

struct Product {
  bool trans_a, trans_b;
  std::int64_t m, n, k;
  float alpha, beta;
};

// Operands in bf16 and the double product of their bf16 values: what fp32 accumulation of
// bf16 inputs must reproduce up to summation order.
struct Operands {
  std::vector<bf16> a, b;
  std::vector<float> c;
  std::vector<double> want;
  std::int64_t lda, ldb, ldc;
};

Operands make_operands(const Product& p, std::uint32_t seed) {
  Operands o;
  // Padded leading dimensions, so strides are exercised too.
  o.lda = (p.trans_a ? p.m : p.k) + 3;
  o.ldb = (p.trans_b ? p.k : p.n) + 5;
  o.ldc = p.n + 2;
  std::vector<float> a((p.trans_a ? p.k : p.m) * o.lda), b((p.trans_b ? p.n : p.k) * o.ldb);
  fill_normal(a, seed);
  fill_normal(b, seed + 1);
  o.c.resize(p.m * o.ldc);
  fill_normal(o.c, seed + 2);
  for (float x : a) o.a.emplace_back(x);
  for (float x : b) o.b.emplace_back(x);
  o.want.resize(o.c.size());
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < o.ldc; ++j) {
      double sum = 0;
      if (j < p.n) {
        for (std::int64_t l = 0; l < p.k; ++l) {
          const bf16 x = p.trans_a ? o.a[l * o.lda + i] : o.a[i * o.lda + l];
          const bf16 y = p.trans_b ? o.b[j * o.ldb + l] : o.b[l * o.ldb + j];
          sum += double(float(x)) * double(float(y));
        }
        o.want[i * o.ldc + j] = p.alpha * sum + p.beta * double(o.c[i * o.ldc + j]);
      } else {
        o.want[i * o.ldc + j] = o.c[i * o.ldc + j];  // the padding is not written
      }
    }
  }
  return o;
}

bool run(GemmCache& cache, const Product& p, Operands& o) {
  return detail::gemm_bf16(cache, p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, o.a.data(), o.lda,
                           o.b.data(), o.ldb, p.beta, o.c.data(), o.ldc);
}

void expect_product(const Product& p, const Operands& o, const std::string& what) {
  double worst = 0;
  for (std::size_t i = 0; i < o.c.size(); ++i) {
    // fp32 accumulation over k terms of unit variance: a few ulps of sqrt(k).
    const double tol = 1e-5 * std::sqrt(double(p.k)) * (1 + std::abs(o.want[i]));
    worst = std::max(worst, std::abs(o.c[i] - o.want[i]) / tol);
  }
  EXPECT_LE(worst, 1.0) << what << ": worst error " << worst << " tolerances";
}

const std::vector<Product> kProducts = {
    {false, false, 64, 48, 32, 1.f, 0.f},  {false, true, 37, 512, 32, 0.25f, 0.f},
    {false, false, 37, 32, 512, 1.f, 0.f}, {true, false, 96, 80, 21, 1.f, 1.f},
    {false, true, 1, 17, 9, 1.f, 0.5f},
};

TEST(GemmBf16, MatchesDoubleProductOfBf16Inputs) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  GemmCache cache;
  for (const Product& p : kProducts) {
    Operands o = make_operands(p, 7);
    ASSERT_TRUE(run(cache, p, o));
    expect_product(p, o, "m " + std::to_string(p.m) + " n " + std::to_string(p.n));
  }
}

// A primitive built inside an OpenMP region must do the whole product on the calling thread.
TEST(GemmBf16, EveryThreadOfARegionGetsItsWholeProduct) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  GemmCache cache(2);  // the region's two threads
  const Product p{false, true, 128, 256, 32, 1.f, 0.f};
  std::vector<Operands> per_task;
  for (int t = 0; t < 8; ++t) per_task.push_back(make_operands(p, 100 + t));
  int failures = 0;
#pragma omp parallel for num_threads(2) reduction(+ : failures)
  for (int t = 0; t < 8; ++t) failures += run(cache, p, per_task[t]) ? 0 : 1;
  EXPECT_EQ(failures, 0);
  for (int t = 0; t < 8; ++t) expect_product(p, per_task[t], "task " + std::to_string(t));
  // And the same shape outside the region, on every thread.
  Operands o = make_operands(p, 9);
  ASSERT_TRUE(run(cache, p, o));
  expect_product(p, o, "outside the region");
}

// More shapes than the cache holds: old ones are evicted and rebuilt, results stay right.
TEST(GemmBf16, ManyShapesStayCorrectBeyondTheCacheCapacity) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  GemmCache cache;
  for (int round = 0; round < 2; ++round) {
    for (std::int64_t m = 1; m <= static_cast<std::int64_t>(detail::kGemmCacheCapacity) + 4; ++m) {
      const Product p{false, false, m, 24, 16, 1.f, 0.f};
      Operands o = make_operands(p, static_cast<std::uint32_t>(m));
      ASSERT_TRUE(run(cache, p, o));
      expect_product(p, o, "m " + std::to_string(m));
    }
  }
}

// Plans in `cache` for [256 + m, 1024] x [1024, 256] products, m = first..last: a oneDNN
// scratchpad each (a transposed A, as the outer products take it).
void run_shapes(GemmCache& cache, std::int64_t first, std::int64_t last) {
  for (std::int64_t m = first; m <= last; ++m) {
    const std::int64_t rows = 256 + m, n = 256, k = 1024;
    const std::vector<bf16> a(static_cast<std::size_t>(k * rows)),
        b(static_cast<std::size_t>(k * n));
    std::vector<float> c(static_cast<std::size_t>(rows * n));
    EXPECT_TRUE(detail::gemm_bf16(cache, true, false, rows, n, k, 1.f, a.data(), rows, b.data(), n,
                                  0.f, c.data(), n));
  }
}

// A cache counts the scratchpads of the plans it holds, and no longer those it evicted: after
// more shapes than it keeps, it holds what a cache given only the last ones holds.
TEST(GemmBf16, ScratchOfACachesPlansIsCountedUntilEvicted) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  const auto capacity = static_cast<std::int64_t>(detail::kGemmCacheCapacity);
  GemmCache all(1), last(1);
  EXPECT_EQ(all.scratch_bytes(), 0u);
  run_shapes(all, 1, capacity + 8);
  run_shapes(last, 9, capacity + 8);
  EXPECT_GT(last.scratch_bytes(), 0u) << "these products take a oneDNN scratchpad";
  EXPECT_EQ(all.scratch_bytes(), last.scratch_bytes());
}

// A product on a thread the cache has no slot for is refused, not run on another's primitives.
TEST(GemmBf16, ThreadBeyondTheCachesSlotsIsRefused) {
  GemmCache one(1);
  EXPECT_NE(one.slot(0), nullptr);
  EXPECT_EQ(one.slot(1), nullptr);
  const std::vector<bf16> a(4, bf16(1.f)), b(4, bf16(1.f));
  std::vector<float> c(4, 0.f);
  bool second_ran = false, refused = false;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      second_ran = true;
      refused = !detail::gemm_bf16(one, false, false, 2, 2, 2, 1.f, a.data(), 2, b.data(), 2, 0.f,
                                   c.data(), 2);
    }
  }
  if (second_ran) {
    EXPECT_TRUE(refused);
  }
}

bool run_f32(GemmCache& cache, const Product& p, Operands& o) {
  // The bf16 operands' values as floats: the same double product is the reference.
  const std::vector<float> a(o.a.begin(), o.a.end()), b(o.b.begin(), o.b.end());
  return detail::gemm_f32(cache, p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), o.lda,
                          b.data(), o.ldb, p.beta, o.c.data(), o.ldc);
}

// The fp32 version, right after the bf16 product of each shape: the two share one plan cache,
// so a plan keyed on the shape alone would run the bf16 primitive on fp32 operands.
TEST(GemmF32, MatchesDoubleProductBesideBf16PlansOfTheSameShape) {
  GemmCache cache;
  for (const Product& p : kProducts) {
    const std::string what = "m " + std::to_string(p.m) + " n " + std::to_string(p.n);
    if (bf16_support().available) {
      Operands o = make_operands(p, 11);
      ASSERT_TRUE(run(cache, p, o));
      expect_product(p, o, "bf16 " + what);
    }
    Operands o = make_operands(p, 12);
    ASSERT_TRUE(run_f32(cache, p, o));
    expect_product(p, o, "fp32 " + what);
  }
  std::vector<float> c = {1.f, 2.f};
  ASSERT_TRUE(detail::gemm_f32(cache, false, false, 1, 2, 0, 1.f, nullptr, 1, nullptr, 2, 2.f,
                               c.data(), 2));
  EXPECT_EQ(c, (std::vector<float>{2.f, 4.f})) << "an empty inner dimension scales C";
}

TEST(GemmBf16, EmptyInnerDimensionScalesC) {
  GemmCache cache;
  std::vector<float> c = {1.f, 2.f, 3.f, 4.f};
  ASSERT_TRUE(detail::gemm_bf16(cache, false, false, 2, 2, 0, 1.f, nullptr, 1, nullptr, 2, 0.5f,
                                c.data(), 2));
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.f, 1.5f, 2.f}));
}

}  // namespace
}  // namespace cpufold::testing
