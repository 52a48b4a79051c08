// AF2's global attention (supplement Alg. 19, MSA column global attention in the extra-MSA
// stack): one query per batch row, the masked mean of the inputs over the key axis, and a
// single key/value head shared by all query heads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

// out[b, :] = Σ_k mask[b, k] · x[b, k, :] / (Σ_k mask[b, k] + 1e-10), AF2's mask_mean that
// forms the query. x: [n_batch, n_key, c], mask: [n_batch, n_key] -> out: [n_batch, c].
// Strided views are fine when the last axes of x and out are unit-stride.
void masked_mean(const Tensor& x, const Tensor& mask, const Tensor& out);

// q: [n_batch, n_head, c_hidden] (already projected from the masked mean),
// k, v: [n_batch, n_key, c_hidden], mask_bias: [n_batch, n_key] or empty
//   -> o: [n_batch, n_head, c_hidden]
// o[b, h] = softmax(q[b, h]·k[b]ᵀ/√c_hidden + mask_bias[b])·v[b]. The gate, which broadcasts o
// over the key axis, is the module's.
void global_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask_bias,
                      const Tensor& o, Arena& scratch);

// Scratch bytes global_attention takes with the current OpenMP thread count.
std::size_t global_attention_scratch_bytes(std::int64_t n_head, std::int64_t n_key);

}  // namespace cpufold
