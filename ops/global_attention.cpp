#include "ops/global_attention.h"

#include <omp.h>

#include <atomic>
#include <cmath>
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

}  // namespace

void masked_mean(const Tensor& x, const Tensor& mask, const Tensor& out) {
  if (x.rank() != 3)
    throw InternalError("masked_mean input must be [batch, key, c], got " + x.describe());
  const std::int64_t n_batch = x.dim(0), n_key = x.dim(1), c = x.dim(2);
  check(x, {n_batch, n_key, c}, "masked_mean input");
  if (mask.dtype() != DType::f32 || !(mask.shape() == Shape{n_batch, n_key})) {
    throw InternalError("masked_mean mask " + mask.describe() + " does not match input " +
                        x.describe());
  }
  check(out, {n_batch, c}, "masked_mean output");
  const float* xp = static_cast<const float*>(x.data());
  const float* mp = static_cast<const float*>(mask.data());
  float* op = static_cast<float*>(out.data());
  const std::int64_t xs0 = x.stride(0), xs1 = x.stride(1), ms0 = mask.stride(0),
                     ms1 = mask.stride(1), os0 = out.stride(0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < n_batch; ++b) {
    float* dst = op + b * os0;
    for (std::int64_t j = 0; j < c; ++j) dst[j] = 0.f;
    float total = 0.f;
    for (std::int64_t k = 0; k < n_key; ++k) {
      const float m = mp[b * ms0 + k * ms1];
      const float* src = xp + b * xs0 + k * xs1;
      total += m;
      for (std::int64_t j = 0; j < c; ++j) dst[j] += m * src[j];
    }
    const float inv = 1.f / (total + 1e-10f);
    for (std::int64_t j = 0; j < c; ++j) dst[j] *= inv;
  }
}

std::size_t global_attention_scratch_bytes(std::int64_t n_head, std::int64_t n_key) {
  return f32_bytes(omp_get_max_threads() * n_head * n_key);
}

void global_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask_bias,
                      const Tensor& o, Arena& scratch) {
  if (q.rank() != 3 || k.rank() != 3) {
    throw InternalError("global attention needs q [batch, head, c] and k [batch, key, c], got " +
                        q.describe() + " and " + k.describe());
  }
  const std::int64_t n_batch = q.dim(0), n_head = q.dim(1), c = q.dim(2), n_key = k.dim(1);
  check(q, {n_batch, n_head, c}, "q");
  check(k, {n_batch, n_key, c}, "k");
  check(v, {n_batch, n_key, c}, "v");
  check(o, {n_batch, n_head, c}, "o");
  const bool has_mask = !mask_bias.empty();
  if (has_mask) check(mask_bias, {n_batch, n_key}, "mask bias");
  if (n_batch == 0 || n_head == 0 || c == 0) return;
  if (n_key == 0) throw InternalError("global attention over zero keys");

  const auto base = [](const Tensor& t) { return static_cast<float*>(t.data()); };
  const std::int64_t ld_q = detail::leading_dim(q.stride(1), n_head, c);
  const std::int64_t ld_k = detail::leading_dim(k.stride(1), n_key, c);
  const std::int64_t ld_v = detail::leading_dim(v.stride(1), n_key, c);
  const std::int64_t ld_o = detail::leading_dim(o.stride(1), n_head, c);
  const float scale = 1.f / std::sqrt(static_cast<float>(c));
  const auto& kernels = detail::row_kernels();
  const int n_threads = omp_get_max_threads();
  ArenaScope scope(scratch);
  float* const logits_all =
      scratch.allocate(DType::f32, Shape{n_threads, n_head, n_key}).data_as<float>();
  std::atomic<bool> failed = false;

#pragma omp parallel for schedule(static) num_threads(n_threads)
  for (std::int64_t b = 0; b < n_batch; ++b) {
    float* logits = logits_all + omp_get_thread_num() * n_head * n_key;
    bool ok = detail::sgemm(false, true, n_head, n_key, c, scale, base(q) + b * q.stride(0), ld_q,
                            base(k) + b * k.stride(0), ld_k, 0.f, logits, n_key);
    const float* mask_row = has_mask ? base(mask_bias) + b * mask_bias.stride(0) : nullptr;
    for (std::int64_t h = 0; h < n_head; ++h) {
      kernels.softmax(logits + h * n_key, mask_row, nullptr, n_key);
    }
    ok = ok && detail::sgemm(false, false, n_head, c, n_key, 1.f, logits, n_key,
                             base(v) + b * v.stride(0), ld_v, 0.f, base(o) + b * o.stride(0), ld_o);
    if (!ok) failed.store(true, std::memory_order_relaxed);
  }
  if (failed) {
    throw InternalError("global attention: oneDNN sgemm rejected q " + q.describe() + " strides " +
                        q.strides().str());
  }
}

}  // namespace cpufold
