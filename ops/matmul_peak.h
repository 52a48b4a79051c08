// The machine's oneDNN matmul rate (fp32, or bf16 inputs with fp32 accumulation), measured on
// a square product, so that a benchmark can state its own speed as a fraction of what this
// CPU reaches in the same run.
#pragma once

#include <cstdint>
#include <string>

#include "memory/dtype.h"

namespace cpufold {

struct MatmulPeak {
  std::int64_t size = 0;    // m = n = k
  double gflops_per_s = 0;  // 2·size³ per product over the best timed product
  std::string impl;         // oneDNN's implementation, e.g. "brg:avx512_core"
};

// Times `repeat` products (after one warm-up) of two random size x size matrices of
// `precision` (f32 or bf16; f32 output) on the process's oneDNN engine and keeps the fastest.
MatmulPeak measure_matmul_peak(std::int64_t size = 1024, int repeat = 5,
                               DType precision = DType::f32);

}  // namespace cpufold
