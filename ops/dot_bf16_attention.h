// The attention core for bf16 heads of 8 to 64 channels (MSA row and column attention,
// triangle attention: 32; the template stack's triangle attention 16; the extra-MSA stack's row
// attention 8) on CPUs with AVX512-BF16 and no AMX. oneDNN's bf16 GEMM runs a query tile's two
// products (K = 32 for q·kᵀ) at about half the matmul peak there, and the softmax then re-reads
// the logits twice; this kernel computes 6 queries' logits with vdpbf16ps in registers, adds the
// biases and takes the max as it stores them, turns them into bf16 weights while they are in
// L1, and multiplies 24/(c/16) queries' weights (24 for 8 and 16 channels) by v the same way.
// Against the small-head kernel (small_head_attention.h, fp32 weights), one thread, 256 queries
// with a pair bias: 1.7-1.9x as fast per tile for 16 channels (4 or 256 keys), 1.36x for 8 at
// 256 keys and 1.14x at 512.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/attention_tile.h"

namespace cpufold::detail {

// Which keys and values the work space holds packed (the tile's k and v pointers): tiles of one
// (batch row, head) share them, so consecutive tiles skip the packing. Reset (default) at the
// start of every attention call: a later call may reuse the addresses for other values.
struct DotBf16Packed {
  const bf16* k = nullptr;
  const bf16* v = nullptr;
};

// Bytes of work space one thread needs for n_key keys of c channels (packed keys and values,
// six rows of logits, a block of bf16 weights), 64-byte aligned pieces.
std::size_t dot_bf16_work_bytes(std::int64_t n_key, std::int64_t c);

// o = softmax(q·kᵀ·scale + pair + mask)·v for the tile: both products take bf16 operands with
// fp32 accumulation (the unnormalised weights rounded to bf16 as they are written, their sum
// taken in fp32, as the GEMM tile path does); logits and o stay fp32. Entries whose shifted
// logit is below -87.3 get weight 0; a NaN logit makes its query's output NaN. `work` is
// dot_bf16_work_bytes(n_key, c) bytes, 64-byte aligned. q, k and v must be 4-byte aligned
// with even leading dimensions (dot_bf16_fits).
using DotBf16Kernel = void (*)(const AttentionTile& tile, std::byte* work, DotBf16Packed& packed);

// The kernel for heads of c channels: null unless c is 8, 16, 32, 48 or 64, the CPU has
// AVX512-BF16 and no AMX (oneDNN's AMX GEMMs are the faster tiles there), and
// CPUFOLD_ROW_KERNELS selects the AVX-512 table. Heads of 8 and 16 channels fill one register of
// values (8: its low half).
DotBf16Kernel dot_bf16_kernel(std::int64_t c);

// Tests only: dot_bf16_kernel returns null, so heads of at most 16 channels take the small-head
// kernel as on CPUs without AVX512-BF16 or with AMX.
void disable_dot_bf16_for_tests(bool on);

// Whether operands at these addresses and leading dimensions (elements) can be read as bf16
// pairs (4-byte aligned, even leading dimensions) and n_key keys addressed with 32-bit offsets.
bool dot_bf16_fits(const void* q, std::int64_t ld_q, const void* k, std::int64_t ld_k,
                   const void* v, std::int64_t ld_v, std::int64_t n_key);

}  // namespace cpufold::detail
