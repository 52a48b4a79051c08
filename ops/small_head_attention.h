// The attention core for heads of at most 16 channels (the extra-MSA stack's 8, the template
// stack's 16) on bf16 q, k and v where the AVX512-BF16 kernel (dot_bf16_attention.h) does not
// run them (CPUs with AMX or without AVX512-BF16, other widths than 8 and 16), and for fp32 heads
// of at most 8. There the per-tile GEMMs of the general path are mostly call overhead (a 128x8
// by 8x256 product is 0.5 MFLOP), so this kernel computes the logits, softmax and weighted sums
// of values of two queries at a time in fp32 AVX-512 registers, keys across the lanes.
#pragma once

#include <cstdint>

#include "ops/attention_tile.h"

namespace cpufold::detail {

inline constexpr std::int64_t kSmallHeadMaxChannels = 16;

// Floats of work space one call needs (keys and values transposed to fp32, two logits rows).
std::int64_t small_head_work_floats(std::int64_t n_key, std::int64_t c);

// o = softmax(q·kᵀ·scale + pair + mask)·v for the tile, in fp32 from the bf16 operands: the
// weights are not rounded to bf16. Entries whose shifted logit is below -87.3 get weight 0, a NaN
// logit makes its query's output NaN. `work` holds small_head_work_floats(n_key, c) floats.
using SmallHeadKernel = void (*)(const AttentionTile& tile, float* work);

// The kernel for heads of c channels: null when c > kSmallHeadMaxChannels, the CPU lacks
// AVX-512 (F, BW, VL), or CPUFOLD_ROW_KERNELS names a table without AVX-512.
// Where the CPU has AVX512-BF16 the q·k products are its dot products of the bf16 pairs (exact
// products, fp32 sums), elsewhere fp32 FMAs.
SmallHeadKernel small_head_kernel(std::int64_t c);

// The same kernel on fp32 q, k and v (FMA products) for heads of at most 8 channels (the fp32
// extra-MSA stack's), where the sgemm tiles are mostly call overhead; null for wider heads and
// where small_head_kernel is null.
using SmallHeadKernelF32 = void (*)(const AttentionTileOf<float>& tile, float* work);
SmallHeadKernelF32 small_head_kernel_f32(std::int64_t c);

// Tests only: small_head_kernel returns the FMA version on every AVX-512 CPU.
void force_small_head_fma(bool on);

}  // namespace cpufold::detail
