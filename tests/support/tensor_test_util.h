// Helpers for unit tests of the primitives and modules: owned f32 buffers with Tensor views,
// seeded random data, and comparisons against double-precision references that report the
// worst element.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/tensor.h"
#include "tests/support/parity.h"

namespace cpufold::testing {

// An owned f32 buffer; `view` describes it (contiguous unless built from strides).
struct Buffer {
  std::vector<float> data;
  Tensor view;

  Buffer(const Shape& shape, float fill = 0.f)
      : data(static_cast<std::size_t>(shape.numel()), fill), view(data.data(), DType::f32, shape) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

inline void fill_normal(std::vector<float>& v, std::uint32_t seed, float stddev = 1.f,
                        float mean = 0.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, stddev);
  for (float& x : v) x = dist(rng);
}

// Reads element `index` of any f32 view as double.
inline double at(const Tensor& t, std::initializer_list<std::int64_t> index) {
  return static_cast<double>(t.at<float>(index));
}

// Compares `got` (row-major over `want`'s order) with a double reference, within one of the
// tolerances of tests/support/parity.h (kF32Elementwise, kF32Matmul, ...).
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                         Tolerance tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t bad = 0, worst = 0;
  double worst_excess = -1.0, max_abs = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    const double excess = err - (tol.atol + tol.rtol * std::abs(want[i]));
    max_abs = std::max(max_abs, err);
    if (!(excess <= 0.0)) ++bad;  // NaN counts as bad
    if (!(excess <= worst_excess)) {
      worst_excess = excess;
      worst = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size()
                     << " elements out of tolerance; max |err| " << max_abs << ", worst at flat "
                     << worst << ": got " << got[worst] << " want " << want[worst];
}

// Gathers any f32 view into a row-major vector (for strided outputs).
inline std::vector<float> gather(const Tensor& t) {
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(t.numel()));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(t.rank()), 0);
  const auto* base = static_cast<const float*>(t.data());
  for (std::int64_t n = 0; n < t.numel(); ++n) {
    std::int64_t off = 0;
    for (int a = 0; a < t.rank(); ++a) off += idx[static_cast<std::size_t>(a)] * t.stride(a);
    out.push_back(base[off]);
    for (int a = t.rank() - 1; a >= 0; --a) {
      if (++idx[static_cast<std::size_t>(a)] < t.dim(a)) break;
      idx[static_cast<std::size_t>(a)] = 0;
    }
  }
  return out;
}

// A scratch arena on DRAM for one test.
inline Arena test_arena(std::size_t bytes = std::size_t{256} << 20) {
  return Arena("test", dram_tier(), bytes);
}

}  // namespace cpufold::testing
