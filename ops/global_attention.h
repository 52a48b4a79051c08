// AF2's global attention (supplement Alg. 19, MSA column global attention in the extra-MSA
// stack): one query per batch row, the masked mean of the inputs over the key axis, and a
// single key/value head shared by all query heads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

// Keys arrive in blocks (the rows of an MSA streamed a slab at a time): the masked mean and the
// softmax are folded into running state block by block, so no batch row's keys are held at once.

// The query's mean, AF2's mask_mean: out[b, :] = Σ_k mask[b, k] · x[b, k, :] / (Σ_k mask[b, k]
// + 1e-10). Folded: sum[b, :] += Σ_k mask[b, k] · x[b, k, :] and count[b] += Σ_k mask[b, k],
// one key after the other, so the bits do not depend on the blocks. x: [n_batch, n_key, c]
// (unit-stride last axis), mask: [n_batch, n_key] (any strides); sum [n_batch, c] and count
// [n_batch] contiguous f32, zero before the first block.
void masked_sum_fold(const Tensor& x, const Tensor& mask, const Tensor& sum, const Tensor& count);
// sum[b, :] /= count[b] + 1e-10: the mean, in place.
void masked_mean_finish(const Tensor& sum, const Tensor& count);

// o[b, h] = softmax(q[b, h]·k[b]ᵀ/√c_hidden + mask_bias[b])·v[b] over all blocks of keys; the
// gate, which broadcasts o over the key axis, is the module's. The softmax so far, per batch row
// and head (contiguous f32):
struct GlobalAttentionRunning {
  Tensor max;  // [n_batch, n_head]: the largest logit so far (-inf before the first block)
  Tensor sum;  // [n_batch, n_head]: Σ exp(logit - max)
  Tensor acc;  // [n_batch, n_head, c_hidden]: Σ exp(logit - max) · v
};
void global_attention_start(const GlobalAttentionRunning& r);
// Folds one block of keys into r. q: [n_batch, n_head, c_hidden] (projected from the masked
// mean), k, v: [n_batch, n_key, c_hidden], mask_bias: [n_batch, n_key] or empty; unit-stride
// last axes, the block's n_key keys.
void global_attention_fold(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask_bias, const GlobalAttentionRunning& r,
                           Arena& scratch);
// r.acc /= r.sum: o, in place.
void global_attention_finish(const GlobalAttentionRunning& r);
// Scratch bytes global_attention_fold takes for a block of n_key keys.
std::size_t global_attention_fold_scratch_bytes(std::int64_t n_head, std::int64_t n_key,
                                                std::int64_t c_hidden);

}  // namespace cpufold
