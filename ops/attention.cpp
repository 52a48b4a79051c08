#include "ops/attention.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/dot_bf16_attention.h"
#include "ops/gemm.h"
#include "ops/row_kernels.h"
#include "ops/small_head_attention.h"

namespace cpufold {
namespace {

constexpr std::int64_t kMaxQueryTile = 256;
// A pair bias above this many bytes makes the tiles run head-major (see head_major_order).
constexpr std::int64_t kHeadMajorPairBytes = std::int64_t{2} << 20;
// Batch rows a head-major task takes one after the other for each query tile (see
// head_major_order).
constexpr std::int64_t kHeadMajorRowGroup = 8;

void check_layout(const Tensor& t, DType type, int rank, const char* what) {
  if (t.dtype() != type || t.rank() != rank || (t.dim(-1) > 1 && t.stride(-1) != 1)) {
    throw InternalError(std::string("attention ") + what + " must be an " +
                        std::string(dtype_name(type)) + " tensor of rank " + std::to_string(rank) +
                        " with a unit-stride last axis, got " + t.describe() + " strides " +
                        t.strides().str());
  }
}

void check_dims(const Tensor& t, std::initializer_list<std::int64_t> dims, const char* what) {
  if (!(t.shape() == Shape(dims))) {
    throw InternalError(std::string("attention ") + what + " has shape " + t.shape().str() +
                        "; expected " + Shape(dims).str());
  }
}

// A typed element pointer plus element strides, for address arithmetic in the tile loop.
template <typename T = float>
struct Strided {
  T* base;
  std::int64_t s0, s1, s2;
  explicit Strided(const Tensor& t)
      : base(static_cast<T*>(t.data())),
        s0(t.rank() > 1 ? t.stride(0) : 0),
        s1(t.rank() > 2 ? t.stride(1) : 0),
        s2(t.rank() > 3 ? t.stride(2) : 0) {}
  T* at(std::int64_t i0, std::int64_t i1, std::int64_t i2) const {
    return base + i0 * s0 + i1 * s1 + i2 * s2;
  }
};

// One (batch row, head, query block) tile, whatever the operands' type.
struct Tile {
  std::int64_t b, h, q0, nq;
};

// Everything the tile loop reads, fixed for one call.
template <typename T>
struct Problem {
  Strided<T> q, k, v;
  Strided<float> o, pair, mask;
  std::int64_t n_key, c, ld_q, ld_k, ld_v;
  float scale;
  bool has_pair, has_mask;
  // Heads of few channels: their own kernel.
  void (*small_head)(const detail::AttentionTileOf<T>&, float*);
  detail::DotBf16Kernel dot;  // bf16 heads of 32-64 channels on AVX512-BF16

  const float* pair_row(const Tile& t, std::int64_t i) const {
    return has_pair ? pair.base + t.h * pair.s0 + (t.q0 + i) * pair.s1 : nullptr;
  }
  const float* mask_row(const Tile& t) const {
    return has_mask ? mask.base + t.b * mask.s0 : nullptr;
  }
};

// The tile as the hand-written kernels take it.
template <typename T>
detail::AttentionTileOf<T> kernel_tile(const Problem<T>& p, const Tile& t) {
  return {p.q.at(t.b, t.q0, t.h),
          p.ld_q,
          p.k.at(t.b, 0, t.h),
          p.ld_k,
          p.v.at(t.b, 0, t.h),
          p.ld_v,
          p.pair_row(t, 0),
          p.pair.s1,
          p.mask_row(t),
          p.o.at(t.b, t.q0, t.h),
          detail::leading_dim(p.o.s1, t.nq, p.c),
          t.nq,
          p.n_key,
          p.c,
          p.scale};
}

// fp32 GEMM tiles' operands, copied dense: oneDNN 2.6 runs a matmul on its brgemm kernels only
// when every operand is dense, and q, k and v are [.., key, head, c] (a head's rows n_head·c
// apart). Strided, it falls back to gemm:jit, which mallocs its packing buffers on every call
// (1.3 MiB at 2,500 keys, mapped and unmapped each time) and ran these tiles at a third to a
// half of the speed (24 x 2500 x 32 q·kᵀ: 62-73 against 150 GFLOP/s; weights·v: 31-92 against
// 202, one AVX-512 core). k and v of a (row, head) are copied once for all its query tiles.
struct DenseTile {
  float* k = nullptr;           // [n_key, c]
  float* v = nullptr;           // [n_key, c]
  float* q = nullptr;           // [tile, c]
  float* o = nullptr;           // [tile, c], the unnormalised product
  std::int64_t b = -1, h = -1;  // whose k and v are in k and v
};

// The tile's output rows: a dense [nq, c] product, each row divided by its softmax sum.
void write_normalised(const Strided<float>& o, const Tile& t, std::int64_t c, const float* product,
                      const float* inv_sum) {
  float* out = o.at(t.b, t.q0, t.h);
  for (std::int64_t i = 0; i < t.nq; ++i) {
    float* row = out + i * o.s1;
    const float* src = product + i * c;
    for (std::int64_t j = 0; j < c; ++j) row[j] = src[j] * inv_sum[i];
  }
}

void copy_rows(const float* src, std::int64_t ld, std::int64_t rows, std::int64_t c, float* dst) {
  for (std::int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * c, src + r * ld, static_cast<std::size_t>(c) * sizeof(float));
  }
}

// fp32: the small-head kernel where one was chosen; otherwise logits and o on cached matmul
// primitives over dense copies (DenseTile), the softmax weights unnormalised and each output
// row divided by its sum as it is copied out (c_hidden instead of n_key divisions per row).
// `dense` and `gemm`: the thread's, null with the small-head kernel.
bool run_tile(const Problem<float>& p, const Tile& t, float* logits, DenseTile* dense_tile,
              GemmCache* gemm_cache) {
  if (p.small_head != nullptr) {
    p.small_head(kernel_tile(p, t), logits);
    return true;
  }
  DenseTile& dense = *dense_tile;
  GemmCache& gemm = *gemm_cache;
  const auto& kernels = detail::row_kernels();
  if (dense.b != t.b || dense.h != t.h) {
    copy_rows(p.k.at(t.b, 0, t.h), p.ld_k, p.n_key, p.c, dense.k);
    copy_rows(p.v.at(t.b, 0, t.h), p.ld_v, p.n_key, p.c, dense.v);
    dense.b = t.b;
    dense.h = t.h;
  }
  copy_rows(p.q.at(t.b, t.q0, t.h), p.ld_q, t.nq, p.c, dense.q);
  bool ok = detail::gemm_f32(gemm, false, true, t.nq, p.n_key, p.c, p.scale, dense.q, p.c, dense.k,
                             p.c, 0.f, logits, p.n_key);
  float inv_sum[kMaxQueryTile];
  for (std::int64_t i = 0; i < t.nq; ++i) {
    inv_sum[i] = 1.f / kernels.softmax_numerator(logits + i * p.n_key, p.pair_row(t, i),
                                                 p.mask_row(t), p.n_key);
  }
  ok = ok && detail::gemm_f32(gemm, false, false, t.nq, p.c, p.n_key, 1.f, logits, p.n_key, dense.v,
                              p.c, 0.f, dense.o, p.c);
  write_normalised(p.o, t, p.c, dense.o, inv_sum);
  return ok;
}

// bf16: the small-head or AVX512-BF16 kernel where one was chosen; otherwise oneDNN GEMM tiles
// that read q, k and v in place, with the unnormalised weights rounded to bf16 as the softmax
// writes them (`weights`) and the product landing in an f32 tile (`product`) normalised into o.
// `packed`: what the thread's work space holds packed (null without the AVX512-BF16 kernel);
// `gemm`: the GEMM tiles' primitives.
bool run_tile(const Problem<bf16>& p, const Tile& t, float* logits, bf16* weights, float* product,
              detail::DotBf16Packed* packed, GemmCache* gemm) {
  if (p.small_head != nullptr) {
    p.small_head(kernel_tile(p, t), logits);
    return true;
  }
  if (p.dot != nullptr) {
    p.dot(kernel_tile(p, t), reinterpret_cast<std::byte*>(logits), *packed);
    return true;
  }
  const auto& kernels = detail::row_kernels();
  bool ok =
      detail::gemm_bf16(*gemm, false, true, t.nq, p.n_key, p.c, p.scale, p.q.at(t.b, t.q0, t.h),
                        p.ld_q, p.k.at(t.b, 0, t.h), p.ld_k, 0.f, logits, p.n_key);
  float inv_sum[kMaxQueryTile];
  for (std::int64_t i = 0; i < t.nq; ++i) {
    inv_sum[i] =
        1.f / kernels.softmax_numerator_bf16(logits + i * p.n_key, p.pair_row(t, i), p.mask_row(t),
                                             p.n_key, weights + i * p.n_key);
  }
  ok = ok && detail::gemm_bf16(*gemm, false, false, t.nq, p.c, p.n_key, 1.f, weights, p.n_key,
                               p.v.at(t.b, 0, t.h), p.ld_v, 0.f, product, p.c);
  write_normalised(p.o, t, p.c, product, inv_sum);
  return ok;
}

// Floats of the per-thread logits buffer: one query tile, or the small-head kernel's work space
// (either precision). (The GEMM tiles stay planned beside the AVX512-BF16 kernel: operands it
// cannot read as bf16 pairs fall back to them.)
std::int64_t logits_floats(std::int64_t n_key, std::int64_t c, DType qkv_type) {
  const std::int64_t tile = attention_query_tile(n_key) * n_key;
  // Room for whichever kernel the call takes: small heads fall back from the AVX512-BF16 kernel
  // to the small-head one when their operands cannot be read as pairs.
  std::int64_t floats = tile;
  const bool small_head = qkv_type == DType::bf16 ? detail::small_head_kernel(c) != nullptr
                                                  : detail::small_head_kernel_f32(c) != nullptr;
  if (small_head) floats = std::max(floats, detail::small_head_work_floats(n_key, c));
  if (qkv_type == DType::bf16 && detail::dot_bf16_kernel(c) != nullptr) {
    floats = std::max(
        floats, static_cast<std::int64_t>(detail::dot_bf16_work_bytes(n_key, c) / sizeof(float)));
  }
  return floats;
}

// Floats of one DenseTile; a thread has kHeadMajorRowGroup of them.
std::int64_t dense_tile_floats(std::int64_t n_key, std::int64_t c) {
  return 2 * n_key * c + 2 * attention_query_tile(n_key) * c;
}

}  // namespace

std::int64_t attention_query_tile(std::int64_t n_key) {
  // 64 Ki floats (256 KiB) of logits per tile, in multiples of 8 rows: more rows help the
  // tile products (oneDNN packs k and v once per tile), fewer keep the tile, and in bf16 its
  // 128 KiB of weights, in a 512 KiB L2. Against 32 Ki floats, measured back to back on an
  // AVX512-BF16 EPYC (primitives_bench, 8 heads of 32 channels): bf16 +5-9% at 256 keys and
  // +15-20% at 512; 128 Ki floats added 3-7% more there but would spill a 512 KiB L2.
  const std::int64_t rows = 65536 / std::max<std::int64_t>(n_key, 1) / 8 * 8;
  return std::clamp<std::int64_t>(rows, 8, kMaxQueryTile);
}

std::size_t attention_scratch_bytes(std::int64_t n_key, std::int64_t c_hidden, DType qkv_type) {
  const std::int64_t tile = attention_query_tile(n_key);
  const auto threads = static_cast<std::size_t>(omp_get_max_threads());
  std::size_t bytes = align_up(
      threads * static_cast<std::size_t>(logits_floats(n_key, c_hidden, qkv_type)) * sizeof(float));
  if (qkv_type == DType::bf16 && detail::small_head_kernel(c_hidden) == nullptr) {
    bytes += align_up(threads * static_cast<std::size_t>(tile * n_key) * sizeof(bf16)) +
             align_up(threads * static_cast<std::size_t>(tile * c_hidden) * sizeof(float));
  }
  if (qkv_type != DType::bf16 && detail::small_head_kernel_f32(c_hidden) == nullptr) {
    bytes += align_up(threads * kHeadMajorRowGroup *
                      static_cast<std::size_t>(dense_tile_floats(n_key, c_hidden)) * sizeof(float));
  }
  return bytes;
}

namespace {

// The sizes of a call, from its checked operands.
struct CallShape {
  DType type;  // of q, k and v
  std::int64_t n_batch, n_query, n_head, c, n_key;
  bool has_pair, has_mask;
};

CallShape check_call(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionBias& bias,
                     const Tensor& o) {
  const DType type = q.dtype() == DType::bf16 ? DType::bf16 : DType::f32;
  check_layout(q, type, 4, "q");
  check_layout(k, type, 4, "k");
  check_layout(v, type, 4, "v");
  check_layout(o, DType::f32, 4, "o");
  const CallShape s{type,     q.dim(0), q.dim(1),           q.dim(2),
                    q.dim(3), k.dim(1), !bias.pair.empty(), !bias.mask.empty()};
  check_dims(k, {s.n_batch, s.n_key, s.n_head, s.c}, "k");
  check_dims(v, {s.n_batch, s.n_key, s.n_head, s.c}, "v");
  check_dims(o, {s.n_batch, s.n_query, s.n_head, s.c}, "o");
  if (s.has_pair) {
    check_layout(bias.pair, DType::f32, 3, "pair bias");
    check_dims(bias.pair, {s.n_head, s.n_query, s.n_key}, "pair bias");
  }
  if (s.has_mask) {
    check_layout(bias.mask, DType::f32, 2, "mask bias");
    check_dims(bias.mask, {s.n_batch, s.n_key}, "mask bias");
  }
  return s;
}

// The kernels a call takes besides the GEMM tiles: the AVX512-BF16 one where its operands can
// be read as bf16 pairs, else the small-head one of the call's precision, where it exists.
struct CallKernels {
  detail::DotBf16Kernel dot = nullptr;
  detail::SmallHeadKernel small_head = nullptr;
  detail::SmallHeadKernelF32 small_head_f32 = nullptr;
  bool bf16_tiles = false;  // bf16 on the GEMM tiles
};

CallKernels choose_kernels(const Tensor& q, const Tensor& k, const Tensor& v, const CallShape& s) {
  CallKernels kernels;
  const bool use_bf16 = s.type == DType::bf16;
  kernels.dot = use_bf16 ? detail::dot_bf16_kernel(s.c) : nullptr;
  if (kernels.dot != nullptr &&
      !detail::dot_bf16_fits(q.data(), detail::leading_dim(q.stride(1), s.n_query, s.c), k.data(),
                             detail::leading_dim(k.stride(1), s.n_key, s.c), v.data(),
                             detail::leading_dim(v.stride(1), s.n_key, s.c), s.n_key)) {
    kernels.dot = nullptr;
  }
  kernels.small_head =
      use_bf16 && kernels.dot == nullptr ? detail::small_head_kernel(s.c) : nullptr;
  kernels.small_head_f32 = use_bf16 ? nullptr : detail::small_head_kernel_f32(s.c);
  kernels.bf16_tiles = use_bf16 && kernels.small_head == nullptr && kernels.dot == nullptr;
  return kernels;
}

template <typename T>
Problem<T> make_problem(const Tensor& q, const Tensor& k, const Tensor& v,
                        const AttentionBias& bias, const Tensor& o, const CallShape& s,
                        const CallKernels& kernels) {
  const Strided<T> sq(q), sk(k), sv(v);
  void (*small)(const detail::AttentionTileOf<T>&, float*) = nullptr;
  if constexpr (std::is_same_v<T, bf16>) {
    small = kernels.small_head;
  } else {
    small = kernels.small_head_f32;
  }
  return Problem<T>{sq,
                    sk,
                    sv,
                    Strided<float>(o),
                    Strided<float>(bias.pair),
                    Strided<float>(bias.mask),
                    s.n_key,
                    s.c,
                    detail::leading_dim(sq.s1, s.n_query, s.c),
                    detail::leading_dim(sk.s1, s.n_key, s.c),
                    detail::leading_dim(sv.s1, s.n_key, s.c),
                    1.f / std::sqrt(static_cast<float>(s.c)),
                    s.has_pair,
                    s.has_mask,
                    small,
                    kernels.dot};
}

// Each thread's work space, from the call's scratch.
struct Workspace {
  std::int64_t tile = 0, logits_per_thread = 0;
  float* logits = nullptr;
  bf16* weights = nullptr;   // bf16 tiles: [tile, n_key] per thread
  float* product = nullptr;  // bf16 tiles: [tile, c] per thread
  // Which keys and values each thread's work space holds packed: none yet in this call.
  std::vector<detail::DotBf16Packed> packed;
  std::vector<DenseTile> dense;  // fp32 GEMM tiles: each thread's dense operands
  GemmCache* gemm = nullptr;     // GEMM tiles: their products' primitives, a slot per thread
};

Workspace allocate_workspace(const CallShape& s, const CallKernels& kernels, int n_threads,
                             Arena& scratch) {
  Workspace w;
  w.tile = attention_query_tile(s.n_key);
  w.logits_per_thread = logits_floats(s.n_key, s.c, s.type);
  w.logits = scratch.allocate(DType::f32, Shape{n_threads, w.logits_per_thread}).data_as<float>();
  w.packed.resize(kernels.dot != nullptr ? static_cast<std::size_t>(n_threads) : 0);
  if (kernels.bf16_tiles) {
    w.weights = scratch.allocate(DType::bf16, Shape{n_threads, w.tile, s.n_key}).data_as<bf16>();
    w.product = scratch.allocate(DType::f32, Shape{n_threads, w.tile, s.c}).data_as<float>();
  }
  if (s.type == DType::f32 && kernels.small_head_f32 == nullptr) {
    const std::int64_t floats = dense_tile_floats(s.n_key, s.c);
    const std::int64_t n_tiles = n_threads * kHeadMajorRowGroup;
    float* all = scratch.allocate(DType::f32, Shape{n_tiles, floats}).data_as<float>();
    w.dense.reserve(static_cast<std::size_t>(n_tiles));
    for (std::int64_t t = 0; t < n_tiles; ++t) {
      float* d = all + t * floats;
      DenseTile tile;
      tile.k = d;
      tile.v = d + s.n_key * s.c;
      tile.q = d + 2 * s.n_key * s.c;
      tile.o = tile.q + w.tile * s.c;
      w.dense.push_back(tile);
    }
  }
  return w;
}

// Tile order. Batch-major (a row's heads one after the other) works while the whole pair bias
// stays in cache; head-major (one head over all rows) keeps just one head's bias hot, which
// pays once the bias is large. Measured (bf16 kernel, AVX512-BF16 EPYC): single thread, 8
// heads of 32 channels, 256 keys (2 MiB of bias): batch-major 161-166 vs 154-155 GFLOP/s
// (no bias: 187-189 vs 168-174); 512 keys (8 MiB): head-major 173-176 vs 115-123. In
// `bench block` (2 threads) at N = 256 batch-major takes row attention's core (2 MiB) from
// 0.46 to 0.41 s and column attention's (no bias) from 0.58 to 0.53; at N = 512 head-major
// takes row attention's (8 MiB) from 1.2 to 0.9 s and triangle attention's (4 MiB) from
// 0.82 to 0.75. Head-major, a task runs one query tile for kHeadMajorRowGroup rows in turn, so
// the tile's bias rows are read from memory once per group instead of once per row (each row's
// k and v stay in that row's DenseTile from tile to tile). Triangle attention at N = 1,200
// (fp32, 2 threads, AVX-512 EPYC), against the pair transition's speed in the same run:
// 0.47-0.61 of it one row at a time, 0.54-0.55 four rows, 0.56-0.69 eight.
bool head_major_order(const CallShape& s) {
  const std::int64_t pair_bytes =
      s.has_pair ? s.n_head * s.n_query * s.n_key * static_cast<std::int64_t>(sizeof(float)) : 0;
  return pair_bytes > kHeadMajorPairBytes;
}

// Every tile of the call, `chunk` batch rows per parallel region (<= 0: all); false when a
// tile failed.
template <typename T>
bool run_tiles(const Problem<T>& p, const CallShape& s, Workspace& w, int n_threads,
               std::int64_t chunk) {
  const std::int64_t tile = w.tile, n_tiles = (s.n_query + tile - 1) / tile;
  const bool head_major = head_major_order(s);
  std::atomic<bool> failed = false;
  const std::int64_t rows_per_region = chunk <= 0 ? s.n_batch : std::min(chunk, s.n_batch);
  // fp32 only: the bf16 kernels keep one row's packed keys and values per thread.
  const std::int64_t group = head_major && std::is_same_v<T, float> ? kHeadMajorRowGroup : 1;
  for (std::int64_t b0 = 0; b0 < s.n_batch; b0 += rows_per_region) {
    const std::int64_t n_rows = std::min(rows_per_region, s.n_batch - b0);
    const std::int64_t n_groups = (n_rows + group - 1) / group;
    const std::int64_t n_tasks = n_groups * s.n_head * n_tiles;
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (std::int64_t task = 0; task < n_tasks; ++task) {
      const std::int64_t q0 = task % n_tiles * tile;
      const std::int64_t head =
          head_major ? task / (n_groups * n_tiles) : task / n_tiles % s.n_head;
      const std::int64_t first =
          (head_major ? task / n_tiles % n_groups : task / (s.n_head * n_tiles)) * group;
      const int thread = omp_get_thread_num();
      float* logits = w.logits + thread * w.logits_per_thread;
      for (std::int64_t row = first; row < std::min(n_rows, first + group); ++row) {
        const Tile t{b0 + row, head, q0, std::min(tile, s.n_query - q0)};
        bool ok;
        if constexpr (std::is_same_v<T, bf16>) {
          ok = run_tile(
              p, t, logits, w.weights != nullptr ? w.weights + thread * tile * s.n_key : nullptr,
              w.product != nullptr ? w.product + thread * tile * s.c : nullptr,
              w.packed.empty() ? nullptr : &w.packed[static_cast<std::size_t>(thread)], w.gemm);
        } else {
          ok = run_tile(
              p, t, logits,
              w.dense.empty()
                  ? nullptr
                  : &w.dense[static_cast<std::size_t>(thread * kHeadMajorRowGroup + (row - first))],
              w.gemm);
        }
        if (!ok) failed.store(true, std::memory_order_relaxed);
      }
    }
  }
  return !failed;
}

}  // namespace

void multi_head_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionBias& bias, const Tensor& o, Arena& scratch,
                          std::int64_t chunk, GemmCache* gemm) {
  const CallShape s = check_call(q, k, v, bias, o);
  if (s.n_batch == 0 || s.n_query == 0 || s.n_head == 0 || s.c == 0) return;
  if (s.n_key == 0) throw InternalError("attention over zero keys");
  const CallKernels kernels = choose_kernels(q, k, v, s);
  const int n_threads = omp_get_max_threads();
  ArenaScope scope(scratch);
  Workspace w = allocate_workspace(s, kernels, n_threads, scratch);
  const bool use_bf16 = s.type == DType::bf16;
  std::optional<GemmCache> own;
  if (kernels.bf16_tiles || (!use_bf16 && kernels.small_head_f32 == nullptr)) {
    w.gemm = &given_or_own(gemm, own);
  }
  const bool ok =
      use_bf16
          ? run_tiles(make_problem<bf16>(q, k, v, bias, o, s, kernels), s, w, n_threads, chunk)
          : run_tiles(make_problem<float>(q, k, v, bias, o, s, kernels), s, w, n_threads, chunk);
  if (!ok) {
    if (w.gemm != nullptr) w.gemm->throw_if_out_of_memory();
    throw InternalError(std::string("attention: oneDNN's ") + (use_bf16 ? "bf16" : "f32") +
                        " matmul rejected q " + q.describe() + " strides " + q.strides().str() +
                        ", k strides " + k.strides().str() + ", v strides " + v.strides().str() +
                        ", o strides " + o.strides().str());
  }
}

}  // namespace cpufold
