// Row kernels: the elementwise and per-row reductions behind softmax, LayerNorm, the
// activations and Linear's unfused epilogues. Two implementations with the same contract:
// AVX2+FMA intrinsics (compiled with a target attribute, so the build needs no -march flag)
// and portable C++; the table is picked once from the running CPU.
// Modules use the Tensor-level functions (softmax.h, layer_norm.h, activations.h); the
// table is for loops that fuse several of these steps per row.
#pragma once

#include <cstdint>

#include "memory/dtype.h"

namespace cpufold::detail {

// Rows of a LayerNorm's input and output, each fp32 or bf16, ld elements apart; y may be x when
// both are fp32.
struct NormRows {
  const void* x;
  std::int64_t ld_x;
  bool x_bf16;
  void* y;
  std::int64_t ld_y;
  bool y_bf16;
};
// The row widths RowKernels::layer_norm_rows takes: 16 to 256 channels, powers of two (AF2's
// c_z 128, c_m 256, c_e and c_t 64; the test models' 16 and 32).
constexpr bool norm_rows_width(std::int64_t n) {
  return n >= 16 && n <= 256 && (n & (n - 1)) == 0;
}

// The portable transpositions every table starts from (RowKernels::transpose, transpose_to_bf16).
void transpose_generic(const float* x, std::int64_t ld_x, std::int64_t rows, std::int64_t cols,
                       float* y, std::int64_t ld_y);
void transpose_to_bf16_generic(const float* x, std::int64_t ld_x, std::int64_t rows,
                               std::int64_t cols, bf16* y, std::int64_t ld_y);

struct RowKernels {
  // x[i] = softmax(x + a + b)[i] over n elements, numerically stable (max subtracted);
  // a and b may be null. Entries whose shifted logit is below -87.3 become exactly 0.
  void (*softmax)(float* x, const float* a, const float* b, std::int64_t n);
  // The softmax without its final division: x = exp(x + a + b - max), returning the sum, so
  // attention can divide its c_hidden-wide output row instead of the n_key-wide weights.
  float (*softmax_numerator)(float* x, const float* a, const float* b, std::int64_t n);
  // The same numerator stored as bf16 into y (x keeps the biased logits); the sum is of the
  // fp32 values.
  float (*softmax_numerator_bf16)(float* x, const float* a, const float* b, std::int64_t n,
                                  bf16* y);
  // y = (x - mean) / sqrt(var + eps) * scale + offset; two-pass variance; y may equal x.
  void (*layer_norm)(const float* x, float* y, const float* scale, const float* offset, float eps,
                     std::int64_t n);
  void (*relu)(float* x, std::int64_t n);
  void (*sigmoid)(float* x, std::int64_t n);
  void (*mul)(float* y, const float* a, std::int64_t n);  // y *= a
  void (*add)(float* y, const float* a, std::int64_t n);  // y += a
  void (*scale)(float* y, float s, std::int64_t n);       // y *= s
  // y = bf16(x), rounded to nearest even as the bf16 constructor (NaN stays NaN): the same bits
  // in every table.
  void (*to_bf16)(const float* x, bf16* y, std::int64_t n);
  const char* name;
  // layer_norm over `rows` rows of n channels (norm_rows_width(n)), each row read as fp32 or
  // bf16 (widened) and written as fp32 or bf16 (rounded as to_bf16): bit for bit what
  // layer_norm and the table's conversions give, in one pass with the row in registers. Null
  // where the table has none (then LayerNorm loops over layer_norm).
  void (*layer_norm_rows)(const NormRows& io, std::int64_t rows, const float* scale,
                          const float* offset, float eps, std::int64_t n) = nullptr;
  // y[k·ld_y + i] = x[i·ld_x + k] for i < rows, k < cols: a block of rows stored as columns
  // (the triangle multiplication's edges go channel-major and its products come back). The
  // bf16 version rounds as to_bf16.
  void (*transpose)(const float* x, std::int64_t ld_x, std::int64_t rows, std::int64_t cols,
                    float* y, std::int64_t ld_y) = transpose_generic;
  void (*transpose_to_bf16)(const float* x, std::int64_t ld_x, std::int64_t rows, std::int64_t cols,
                            bf16* y, std::int64_t ld_y) = transpose_to_bf16_generic;
};

// Which kernels to run: CPUFOLD_ROW_KERNELS=auto (default: the fastest the CPU supports),
// generic, avx2 or avx512, so the suite can exercise every path on one machine. Read once;
// throws InputError for an unknown value, or for a table this CPU cannot run. Also governs
// the AVX2 loop of the MSA clustering (on with avx2 and avx512).
enum class RowKernelChoice { automatic, generic, avx2, avx512 };
RowKernelChoice row_kernel_choice();
// Whether AVX2 code may run: the CPU has it and CPUFOLD_ROW_KERNELS does not say generic.
bool use_avx2();

// The table CPUFOLD_ROW_KERNELS selects (by default the fastest the CPU supports).
const RowKernels& row_kernels();
// Both tables, for tests that compare them.
const RowKernels& generic_row_kernels();
// Null when the CPU lacks AVX2 or FMA.
const RowKernels* avx2_row_kernels();
// The AVX2 table with AVX-512 softmax numerators, bf16 conversions (where the CPU has
// AVX512-BF16, its rounding instruction; the bf16 numerator with its own exp) and
// layer_norm_rows; null without AVX-512 (F, BW, VL) or AVX2.
const RowKernels* avx512_row_kernels();

}  // namespace cpufold::detail
