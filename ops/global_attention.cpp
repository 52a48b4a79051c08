#include "ops/global_attention.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "ops/gemm.h"
#include "ops/row_kernels.h"

namespace cpufold {
namespace {

void check(const Tensor& t, std::initializer_list<std::int64_t> dims, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == Shape(dims)) ||
      (t.dim(-1) > 1 && t.stride(-1) != 1)) {
    throw InternalError(std::string("global attention ") + what + " must be f32" +
                        Shape(dims).str() + " with a unit-stride last axis, got " + t.describe() +
                        " strides " + t.strides().str());
  }
}

void check_contiguous(const Tensor& t, const Shape& shape, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == shape) || !t.is_contiguous()) {
    throw InternalError(std::string("global attention ") + what + " must be contiguous f32" +
                        shape.str() + ", got " + t.describe());
  }
}

}  // namespace

void masked_sum_fold(const Tensor& x, const Tensor& mask, const Tensor& sum, const Tensor& count) {
  if (x.rank() != 3)
    throw InternalError("masked_sum_fold input must be [batch, key, c], got " + x.describe());
  const std::int64_t n_batch = x.dim(0), n_key = x.dim(1), c = x.dim(2);
  check(x, {n_batch, n_key, c}, "masked_sum_fold input");
  if (mask.dtype() != DType::f32 || !(mask.shape() == Shape{n_batch, n_key})) {
    throw InternalError("masked_sum_fold mask " + mask.describe() + " does not match input " +
                        x.describe());
  }
  check_contiguous(sum, Shape{n_batch, c}, "masked sum");
  check_contiguous(count, Shape{n_batch}, "mask count");
  const float* xp = static_cast<const float*>(x.data());
  const float* mp = static_cast<const float*>(mask.data());
  float* sp = static_cast<float*>(sum.data());
  float* cp = static_cast<float*>(count.data());
  const std::int64_t xs0 = x.stride(0), xs1 = x.stride(1), ms0 = mask.stride(0),
                     ms1 = mask.stride(1);
  // masked_mean's arithmetic, one key after the other, carried over from the blocks before.
#pragma omp parallel for schedule(static) if (n_batch * n_key * c >= (1 << 14))
  for (std::int64_t b = 0; b < n_batch; ++b) {
    float* dst = sp + b * c;
    float total = cp[b];
    for (std::int64_t k = 0; k < n_key; ++k) {
      const float m = mp[b * ms0 + k * ms1];
      const float* src = xp + b * xs0 + k * xs1;
      total += m;
      for (std::int64_t j = 0; j < c; ++j) dst[j] += m * src[j];
    }
    cp[b] = total;
  }
}

void masked_mean_finish(const Tensor& sum, const Tensor& count) {
  if (sum.rank() != 2) throw InternalError("masked sum must be [batch, c], got " + sum.describe());
  const std::int64_t n_batch = sum.dim(0), c = sum.dim(1);
  check_contiguous(sum, Shape{n_batch, c}, "masked sum");
  check_contiguous(count, Shape{n_batch}, "mask count");
  float* sp = static_cast<float*>(sum.data());
  const float* cp = static_cast<const float*>(count.data());
  for (std::int64_t b = 0; b < n_batch; ++b) {
    const float inv = 1.f / (cp[b] + 1e-10f);
    for (std::int64_t j = 0; j < c; ++j) sp[b * c + j] *= inv;
  }
}

void global_attention_start(const GlobalAttentionRunning& r) {
  const float lowest = -std::numeric_limits<float>::infinity();
  std::fill_n(static_cast<float*>(r.max.data()), r.max.numel(), lowest);
  std::fill_n(static_cast<float*>(r.sum.data()), r.sum.numel(), 0.f);
  std::fill_n(static_cast<float*>(r.acc.data()), r.acc.numel(), 0.f);
}

std::size_t global_attention_fold_scratch_bytes(std::int64_t n_head, std::int64_t n_key,
                                                std::int64_t c_hidden) {
  return f32_bytes(omp_get_max_threads() * n_head * (n_key + c_hidden + 2));
}

void global_attention_fold(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask_bias, const GlobalAttentionRunning& r,
                           Arena& scratch) {
  if (q.rank() != 3 || k.rank() != 3) {
    throw InternalError("global attention needs q [batch, head, c] and k [batch, key, c], got " +
                        q.describe() + " and " + k.describe());
  }
  const std::int64_t n_batch = q.dim(0), n_head = q.dim(1), c = q.dim(2), n_key = k.dim(1);
  check(q, {n_batch, n_head, c}, "q");
  check(k, {n_batch, n_key, c}, "k");
  check(v, {n_batch, n_key, c}, "v");
  check_contiguous(r.max, Shape{n_batch, n_head}, "running max");
  check_contiguous(r.sum, Shape{n_batch, n_head}, "running sum");
  check_contiguous(r.acc, Shape{n_batch, n_head, c}, "running output");
  const bool has_mask = !mask_bias.empty();
  if (has_mask) check(mask_bias, {n_batch, n_key}, "mask bias");
  if (n_batch == 0 || n_head == 0 || c == 0 || n_key == 0) return;

  const auto base = [](const Tensor& t) { return static_cast<float*>(t.data()); };
  const std::int64_t ld_q = detail::leading_dim(q.stride(1), n_head, c);
  const std::int64_t ld_k = detail::leading_dim(k.stride(1), n_key, c);
  const std::int64_t ld_v = detail::leading_dim(v.stride(1), n_key, c);
  const float scale = 1.f / std::sqrt(static_cast<float>(c));
  const auto& kernels = detail::row_kernels();
  const int n_threads = omp_get_max_threads();
  const std::int64_t per_thread = n_head * (n_key + c + 2);
  ArenaScope scope(scratch);
  float* const all = scratch.allocate(DType::f32, Shape{n_threads, per_thread}).data_as<float>();
  std::atomic<bool> failed = false;

#pragma omp parallel for schedule(static) num_threads(n_threads)
  for (std::int64_t b = 0; b < n_batch; ++b) {
    float* logits = all + omp_get_thread_num() * per_thread;  // [n_head, n_key]
    float* pv = logits + n_head * n_key;                      // [n_head, c]
    float* keep = pv + n_head * c;                            // per head: the old state's factor
    float* add = keep + n_head;                               // and the block's
    bool ok = detail::sgemm(false, true, n_head, n_key, c, scale, base(q) + b * q.stride(0), ld_q,
                            base(k) + b * k.stride(0), ld_k, 0.f, logits, n_key);
    const float* bias = has_mask ? base(mask_bias) + b * mask_bias.stride(0) : nullptr;
    float* max = base(r.max) + b * n_head;
    float* sum = base(r.sum) + b * n_head;
    for (std::int64_t h = 0; h < n_head; ++h) {
      float* row = logits + h * n_key;
      float block_max = -std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < n_key; ++i) {
        if (bias != nullptr) row[i] += bias[i * mask_bias.stride(1)];
        block_max = std::max(block_max, row[i]);
      }
      // row = exp(row - block_max); then both sums are rescaled to the larger maximum.
      const float block_sum = kernels.softmax_numerator(row, nullptr, nullptr, n_key);
      const float top = std::max(max[h], block_max);
      keep[h] = std::exp(max[h] - top);
      add[h] = std::exp(block_max - top);
      max[h] = top;
      sum[h] = sum[h] * keep[h] + block_sum * add[h];
    }
    ok = ok && detail::sgemm(false, false, n_head, c, n_key, 1.f, logits, n_key,
                             base(v) + b * v.stride(0), ld_v, 0.f, pv, c);
    float* acc = base(r.acc) + b * n_head * c;
    for (std::int64_t h = 0; h < n_head; ++h) {
      for (std::int64_t j = 0; j < c; ++j)
        acc[h * c + j] = acc[h * c + j] * keep[h] + pv[h * c + j] * add[h];
    }
    if (!ok) failed.store(true, std::memory_order_relaxed);
  }
  if (failed) {
    throw InternalError("global attention: oneDNN sgemm rejected q " + q.describe() + " strides " +
                        q.strides().str());
  }
}

void global_attention_finish(const GlobalAttentionRunning& r) {
  const std::int64_t n = r.sum.numel(), c = n > 0 ? r.acc.numel() / n : 0;
  float* acc = static_cast<float*>(r.acc.data());
  const float* sum = static_cast<const float*>(r.sum.data());
  for (std::int64_t i = 0; i < n; ++i) {
    const float inv = 1.f / sum[i];
    for (std::int64_t j = 0; j < c; ++j) acc[i * c + j] *= inv;
  }
}

}  // namespace cpufold
