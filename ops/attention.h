// The attention core shared by AF2's MSA row/column attention and triangle attention
// (supplement Alg. 7, 8, 13, 14): o = softmax(q·kᵀ/√d + pair bias + mask bias)·v per head.
// Projections, gating and the output projection belong to the modules (Linear with a
// {sigmoid, multiply} epilogue fuses the gate into the gating projection).
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

class GemmCache;  // ops/gemm.h

// Additive logit biases; each is optional (an empty Tensor).
struct AttentionBias {
  Tensor pair;  // [n_head, n_query, n_key], shared by every batch row (pair / triangle bias)
  Tensor mask;  // [n_batch, n_key], per batch row over keys, e.g. 1e9 * (mask - 1)
};

// q: [n_batch, n_query, n_head, c_hidden], k, v: [n_batch, n_key, n_head, c_hidden]
//   -> o: [n_batch, n_query, n_head, c_hidden].
// Every tensor may be a strided view (a transposed MSA for column attention, k and v slices
// of one fused projection) as long as its last axis is unit-stride; o must not overlap the
// inputs. The 1/√c_hidden scale is applied to q·kᵀ (AF2 scales q first; equal to rounding).
//
// The work is split into (batch row, head, block of queries) tiles: each tile's logits are
// computed, biased, softmaxed and multiplied by v while they sit in cache, so the scratch is
// attention_scratch_bytes(n_key) (one logits block per thread), never n_batch·n_head·n²
// floats, whatever `chunk` is. `chunk` batch rows share one parallel region (<= 0: all rows,
// the fastest: fewer barriers); results are bitwise the same for every chunk size and thread
// count.
// q, k and v are all f32 or all bf16. bf16: both products take bf16 inputs (the unnormalised
// softmax weights rounded as they are written) with fp32 accumulation on oneDNN's bf16
// matmul; logits, softmax and o stay fp32. Heads of 8, 16 and 32-64 channels on AVX512-BF16
// without AMX take cpufold's vdpbf16ps kernel (dot_bf16_attention.h), with the same rounding as
// the matmul tiles. Other heads of at most 16 channels take the AVX-512 small-head kernel
// (small_head_attention.h): fp32 products of the bf16 operands, weights not rounded. fp32
// heads of at most 8 channels (the extra-MSA stack's) take its fp32 version.
// gemm: the primitives of the GEMM tiles (ops/gemm.h), which the caller keeps across calls
// (RunContext::gemm); null: this call makes its own.
void multi_head_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionBias& bias, const Tensor& o, Arena& scratch,
                          std::int64_t chunk = 0, GemmCache* gemm = nullptr);

// Queries per tile for n_key keys: a block of logits stays within a core's L2.
std::int64_t attention_query_tile(std::int64_t n_key);

// Scratch bytes multi_head_attention takes from the arena with the current OpenMP thread count
// for q, k, v of `qkv_type` (bf16 adds a tile of bf16 weights and an f32 tile of c_hidden; fp32
// GEMM tiles add dense copies of a query tile, its product and up to 8 rows' k and v; for small
// heads the logits buffer holds the small-head kernel's work space).
std::size_t attention_scratch_bytes(std::int64_t n_key, std::int64_t c_hidden,
                                    DType qkv_type = DType::f32);

}  // namespace cpufold
