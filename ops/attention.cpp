#include "ops/attention.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "ops/gemm.h"
#include "ops/row_kernels.h"

namespace cpufold {
namespace {

constexpr std::int64_t kMaxQueryTile = 128;

void check_f32(const Tensor& t, int rank, const char* what) {
  if (t.dtype() != DType::f32 || t.rank() != rank || (t.dim(-1) > 1 && t.stride(-1) != 1)) {
    throw InternalError(std::string("attention ") + what + " must be an f32 tensor of rank " +
                        std::to_string(rank) + " with a unit-stride last axis, got " +
                        t.describe() + " strides " + t.strides().str());
  }
}

void check_dims(const Tensor& t, std::initializer_list<std::int64_t> dims, const char* what) {
  if (!(t.shape() == Shape(dims))) {
    throw InternalError(std::string("attention ") + what + " has shape " + t.shape().str() +
                        "; expected " + Shape(dims).str());
  }
}

// A typed element pointer plus element strides, for address arithmetic in the tile loop.
struct Strided {
  float* base;
  std::int64_t s0, s1, s2;
  explicit Strided(const Tensor& t)
      : base(static_cast<float*>(t.data())),
        s0(t.rank() > 1 ? t.stride(0) : 0),
        s1(t.rank() > 2 ? t.stride(1) : 0),
        s2(t.rank() > 3 ? t.stride(2) : 0) {}
};

}  // namespace

std::int64_t attention_query_tile(std::int64_t n_key) {
  // 32 Ki floats (128 KiB) of logits per tile, in multiples of 8 rows: measured best with
  // oneDNN's sgemm on an AVX2 EPYC for n_key 128..1024 (more rows help the gemm, fewer keep
  // the tile in L2).
  const std::int64_t rows = 32768 / std::max<std::int64_t>(n_key, 1) / 8 * 8;
  return std::clamp<std::int64_t>(rows, 8, kMaxQueryTile);
}

std::size_t attention_scratch_bytes(std::int64_t n_key) {
  const auto per_thread = static_cast<std::size_t>(attention_query_tile(n_key) * n_key);
  return align_up(static_cast<std::size_t>(omp_get_max_threads()) * per_thread * sizeof(float));
}

void multi_head_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionBias& bias, const Tensor& o, Arena& scratch,
                          std::int64_t chunk) {
  check_f32(q, 4, "q");
  check_f32(k, 4, "k");
  check_f32(v, 4, "v");
  check_f32(o, 4, "o");
  const std::int64_t n_batch = q.dim(0), n_query = q.dim(1), n_head = q.dim(2), c = q.dim(3);
  const std::int64_t n_key = k.dim(1);
  check_dims(k, {n_batch, n_key, n_head, c}, "k");
  check_dims(v, {n_batch, n_key, n_head, c}, "v");
  check_dims(o, {n_batch, n_query, n_head, c}, "o");
  const bool has_pair = !bias.pair.empty(), has_mask = !bias.mask.empty();
  if (has_pair) {
    check_f32(bias.pair, 3, "pair bias");
    check_dims(bias.pair, {n_head, n_query, n_key}, "pair bias");
  }
  if (has_mask) {
    check_f32(bias.mask, 2, "mask bias");
    check_dims(bias.mask, {n_batch, n_key}, "mask bias");
  }
  if (n_batch == 0 || n_query == 0 || n_head == 0 || c == 0) return;
  if (n_key == 0) throw InternalError("attention over zero keys");

  const Strided sq(q), sk(k), sv(v), so(o), sp(bias.pair), sm(bias.mask);
  const std::int64_t lda_q = detail::leading_dim(sq.s1, n_query, c);
  const std::int64_t ld_k = detail::leading_dim(sk.s1, n_key, c);
  const std::int64_t ld_v = detail::leading_dim(sv.s1, n_key, c);
  const std::int64_t ld_o = detail::leading_dim(so.s1, n_query, c);
  const float scale = 1.f / std::sqrt(static_cast<float>(c));
  const auto& kernels = detail::row_kernels();

  const std::int64_t tile = attention_query_tile(n_key);
  const std::int64_t n_tiles = (n_query + tile - 1) / tile;
  const int n_threads = omp_get_max_threads();
  ArenaScope scope(scratch);
  float* const logits_all =
      scratch.allocate(DType::f32, Shape{n_threads, tile, n_key}).data_as<float>();

  std::atomic<bool> failed = false;
  const std::int64_t rows_per_region = chunk <= 0 ? n_batch : std::min(chunk, n_batch);
  for (std::int64_t b0 = 0; b0 < n_batch; b0 += rows_per_region) {
    const std::int64_t n_tasks = std::min(rows_per_region, n_batch - b0) * n_head * n_tiles;
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (std::int64_t task = 0; task < n_tasks; ++task) {
      const std::int64_t b = b0 + task / (n_head * n_tiles);
      const std::int64_t h = task / n_tiles % n_head;
      const std::int64_t q0 = task % n_tiles * tile;
      const std::int64_t nq = std::min(tile, n_query - q0);
      float* logits = logits_all + omp_get_thread_num() * tile * n_key;

      // logits[nq, n_key] = scale * q[b, q0:, h, :] · k[b, :, h, :]ᵀ
      bool ok = detail::sgemm(false, true, nq, n_key, c, scale,
                              sq.base + b * sq.s0 + q0 * sq.s1 + h * sq.s2, lda_q,
                              sk.base + b * sk.s0 + h * sk.s2, ld_k, 0.f, logits, n_key);
      // Unnormalised weights; each output row is divided by its sum after the product, which
      // touches c_hidden instead of n_key elements per row.
      const float* mask_row = has_mask ? sm.base + b * sm.s0 : nullptr;
      float inv_sum[kMaxQueryTile];
      for (std::int64_t i = 0; i < nq; ++i) {
        const float* pair_row = has_pair ? sp.base + h * sp.s0 + (q0 + i) * sp.s1 : nullptr;
        inv_sum[i] = 1.f / kernels.softmax_numerator(logits + i * n_key, pair_row, mask_row, n_key);
      }
      // o[b, q0:, h, :] = weights · v[b, :, h, :] / sums
      float* out = so.base + b * so.s0 + q0 * so.s1 + h * so.s2;
      ok = ok && detail::sgemm(false, false, nq, c, n_key, 1.f, logits, n_key,
                               sv.base + b * sv.s0 + h * sv.s2, ld_v, 0.f, out, ld_o);
      for (std::int64_t i = 0; i < nq; ++i) kernels.scale(out + i * so.s1, inv_sum[i], c);
      if (!ok) failed.store(true, std::memory_order_relaxed);
    }
  }
  if (failed) {
    throw InternalError("attention: oneDNN sgemm rejected q " + q.describe() + " strides " +
                        q.strides().str() + ", k strides " + k.strides().str() + ", v strides " +
                        v.strides().str() + ", o strides " + o.strides().str());
  }
}

}  // namespace cpufold
