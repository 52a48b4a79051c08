#include "ops/attention.h"

#include <gtest/gtest.h>
#include <omp.h>

#include "ops/compute_precision.h"
#include "ops/dot_bf16_attention.h"
#include "ops/small_head_attention.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

struct Dims {
  std::int64_t batch, query, key, head, c;
};
// {2, 300, 200, ...}: a full query tile of kMaxQueryTile (256) rows and a remainder.
// {2, 300, 300, 8, 32}: a 2.9 MB pair bias, over the size from which tiles run head-major.
const Dims kShapes[] = {{1, 1, 1, 1, 1},      {3, 7, 33, 2, 8},    {2, 33, 7, 4, 32},
                        {1, 255, 255, 1, 16}, {5, 130, 129, 3, 5}, {9, 17, 300, 8, 32},
                        {2, 300, 200, 2, 16}, {2, 300, 300, 8, 32}};

// Naive double loops over any f32 views (gathered to row-major first).
std::vector<double> reference_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const AttentionBias& bias) {
  const std::int64_t nb = q.dim(0), nq = q.dim(1), nh = q.dim(2), c = q.dim(3), nk = k.dim(1);
  const auto qd = gather(q), kd = gather(k), vd = gather(v);
  const auto pd = bias.pair.empty() ? std::vector<float>{} : gather(bias.pair);
  const auto md = bias.mask.empty() ? std::vector<float>{} : gather(bias.mask);
  const auto idx = [](std::int64_t flat) { return static_cast<std::size_t>(flat); };
  std::vector<double> o(idx(nb * nq * nh * c));
  std::vector<double> w(idx(nk));
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < nq; ++i)
      for (std::int64_t h = 0; h < nh; ++h) {
        double max = -INFINITY, sum = 0.0;
        for (std::int64_t j = 0; j < nk; ++j) {
          double l = 0.0;
          for (std::int64_t d = 0; d < c; ++d) {
            l += static_cast<double>(qd[idx(((b * nq + i) * nh + h) * c + d)]) *
                 kd[idx(((b * nk + j) * nh + h) * c + d)];
          }
          l /= std::sqrt(static_cast<double>(c));
          if (!pd.empty()) l += pd[idx((h * nq + i) * nk + j)];
          if (!md.empty()) l += md[idx(b * nk + j)];
          w[idx(j)] = l;
          max = std::max(max, l);
        }
        for (double& l : w) sum += l = std::exp(l - max);
        for (std::int64_t d = 0; d < c; ++d) {
          double acc = 0.0;
          for (std::int64_t j = 0; j < nk; ++j)
            acc += w[idx(j)] * vd[idx(((b * nk + j) * nh + h) * c + d)];
          o[idx(((b * nq + i) * nh + h) * c + d)] = acc / sum;
        }
      }
  return o;
}

struct Inputs {
  Buffer q, k, v, pair, mask;
  explicit Inputs(const Dims& d, std::uint32_t seed = 50)
      : q(Shape{d.batch, d.query, d.head, d.c}),
        k(Shape{d.batch, d.key, d.head, d.c}),
        v(Shape{d.batch, d.key, d.head, d.c}),
        pair(Shape{d.head, d.query, d.key}),
        mask(Shape{d.batch, d.key}) {
    fill_normal(q.data, seed, 1.f);
    fill_normal(k.data, seed + 1, 1.f);
    fill_normal(v.data, seed + 2);
    fill_normal(pair.data, seed + 3, 2.f);
    // Every third key masked out with AF2's 1e9 * (mask - 1); key 0 always kept.
    for (std::int64_t b = 0; b < d.batch; ++b)
      for (std::int64_t j = 0; j < d.key; ++j)
        mask.data[static_cast<std::size_t>(b * d.key + j)] = (j + b) % 3 == 2 ? -1e9f : 0.f;
  }
  AttentionBias bias(bool with_pair, bool with_mask) const {
    return {with_pair ? pair.view : Tensor(), with_mask ? mask.view : Tensor()};
  }
};

std::string name(const Dims& d, bool pair, bool mask) {
  return "attention B" + std::to_string(d.batch) + " Q" + std::to_string(d.query) + " K" +
         std::to_string(d.key) + " H" + std::to_string(d.head) + " D" + std::to_string(d.c) +
         (pair ? " +pair" : "") + (mask ? " +mask" : "");
}

TEST(Attention, MatchesDoubleReferenceWithAndWithoutBiases) {
  Arena arena = test_arena();
  for (const Dims& d : kShapes) {
    const Inputs in(d);
    for (bool pair : {false, true}) {
      for (bool mask : {false, true}) {
        Buffer o(Shape{d.batch, d.query, d.head, d.c});
        const AttentionBias bias = in.bias(pair, mask);
        multi_head_attention(in.q.view, in.k.view, in.v.view, bias, o.view, arena);
        expect_close(o.data, reference_attention(in.q.view, in.k.view, in.v.view, bias), kF32Matmul,
                     name(d, pair, mask));
        EXPECT_EQ(arena.used(), 0u);
      }
    }
  }
}

TEST(Attention, ChunkSizeAndThreadCountDoNotChangeResults) {
  Arena arena = test_arena();
  const Dims d{11, 40, 37, 4, 32};
  const Inputs in(d);
  const AttentionBias bias = in.bias(true, true);
  Buffer all(Shape{d.batch, d.query, d.head, d.c});
  multi_head_attention(in.q.view, in.k.view, in.v.view, bias, all.view, arena, 0);
  const std::vector<double> want(all.data.begin(), all.data.end());
  for (std::int64_t chunk : {1, 3, 8, 11, 100}) {
    Buffer o(Shape{d.batch, d.query, d.head, d.c});
    multi_head_attention(in.q.view, in.k.view, in.v.view, bias, o.view, arena, chunk);
    expect_close(o.data, want, kF32SameMath, "chunk " + std::to_string(chunk));
    EXPECT_EQ(o.data, all.data) << "chunk " << chunk << " is not bitwise identical";
  }
  const int threads = omp_get_max_threads();
  for (int n : {1, 3}) {
    omp_set_num_threads(n);
    Buffer o(Shape{d.batch, d.query, d.head, d.c});
    multi_head_attention(in.q.view, in.k.view, in.v.view, bias, o.view, arena, 2);
    EXPECT_EQ(o.data, all.data) << n << " threads are not bitwise identical";
  }
  omp_set_num_threads(threads);
}

TEST(Attention, StridedViewsForColumnAttentionAndFusedProjections) {
  Arena arena = test_arena();
  // Column attention: the MSA activations are [n_seq, n_res, ...]; attention runs over n_seq
  // for each residue, so q/k/v are transposed views. k and v are slices of one [.., 3, H, D]
  // projection buffer, and o is written back transposed too.
  const std::int64_t n_seq = 13, n_res = 6, h = 2, c = 8;
  Buffer qkv(Shape{n_seq, n_res, 3, h, c}), pair(Shape{h, n_seq, n_seq}), mask(Shape{n_res, n_seq});
  fill_normal(qkv.data, 60);
  fill_normal(pair.data, 61);
  fill_normal(mask.data, 62);
  const Tensor t = qkv.view.transpose(0, 1);  // [n_res, n_seq, 3, h, c]
  const Tensor q = t.select(2, 0), k = t.select(2, 1), v = t.select(2, 2);
  Buffer out(Shape{n_seq, n_res, h, c});
  const Tensor o = out.view.transpose(0, 1);
  const AttentionBias bias{pair.view, mask.view};
  multi_head_attention(q, k, v, bias, o, arena, 4);
  expect_close(gather(o), reference_attention(q, k, v, bias), kF32Matmul, "strided attention");
}

// q, k and v of `in` as one bf16 [batch, n, 3, head, c] buffer (the fused projection's layout
// under bf16 compute), and their values after rounding, for the reference.
struct Bf16Qkv {
  std::vector<bf16> data;
  Buffer rounded;
  Tensor q, k, v;
  explicit Bf16Qkv(const Inputs& in, const Dims& d)
      : rounded(Shape{d.batch, d.query, 3, d.head, d.c}) {
    const std::vector<float>* src[] = {&in.q.data, &in.k.data, &in.v.data};
    const std::int64_t hc = d.head * d.c;
    data.resize(rounded.data.size());
    for (std::int64_t r = 0; r < d.batch * d.query; ++r)
      for (int part = 0; part < 3; ++part)
        for (std::int64_t e = 0; e < hc; ++e) {
          const auto at = static_cast<std::size_t>((r * 3 + part) * hc + e);
          data[at] = bf16((*src[part])[static_cast<std::size_t>(r * hc + e)]);
          rounded.data[at] = static_cast<float>(data[at]);
        }
    const Tensor all(data.data(), DType::bf16, rounded.view.shape());
    q = all.select(2, 0), k = all.select(2, 1), v = all.select(2, 2);
  }
};

TEST(Attention, Bf16OperandsMatchDoubleReferenceOfTheRoundedValues) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  Arena arena = test_arena();
  for (const Dims& d : kShapes) {
    if (d.query != d.key) continue;  // one fused projection: self-attention
    const Inputs in(d);
    const Bf16Qkv qkv(in, d);
    const Tensor& r = qkv.rounded.view;
    for (bool pair : {false, true}) {
      Buffer o(Shape{d.batch, d.query, d.head, d.c});
      const AttentionBias bias = in.bias(pair, true);
      multi_head_attention(qkv.q, qkv.k, qkv.v, bias, o.view, arena);
      // What remains is the softmax weights' rounding to bf16 (2^-9 relative each), averaged
      // over the keys: a few 1e-3 of |v| ~ 1.
      expect_close(o.data,
                   reference_attention(r.select(2, 0), r.select(2, 1), r.select(2, 2), bias),
                   {4e-3, 1e-2}, "bf16 " + name(d, pair, true));
      EXPECT_EQ(arena.used(), 0u);
    }
  }
}

// The small-head kernel's results for shapes that take every remainder path: odd query counts
// (the second query of a pass), 5 channels (partial stores), 1 and 16, 1,100 keys (a logits
// tile smaller than the kernel's work space for 16 channels).
void small_heads_match_reference(bool fma) {
  for (const Dims& d :
       {Dims{1, 1, 1, 1, 1}, Dims{2, 37, 37, 3, 8}, Dims{3, 130, 130, 2, 5},
        Dims{1, 255, 255, 2, 16}, Dims{2, 16, 16, 8, 8}, Dims{1, 1100, 1100, 1, 16}}) {
    const Inputs in(d, 70);
    const Bf16Qkv qkv(in, d);
    const Tensor& r = qkv.rounded.view;
    for (bool pair : {false, true}) {
      Buffer o(Shape{d.batch, d.query, d.head, d.c});
      const AttentionBias bias = in.bias(pair, true);
      // In an arena of exactly the planned size: the kernel's work space is in the plan.
      Arena arena("exact", dram_tier(), attention_scratch_bytes(d.key, d.c, DType::bf16));
      multi_head_attention(qkv.q, qkv.k, qkv.v, bias, o.view, arena, 1);
      expect_close(
          o.data, reference_attention(r.select(2, 0), r.select(2, 1), r.select(2, 2), bias),
          kF32Matmul,
          std::string(fma ? "FMA" : "default") + " bf16 small heads " + name(d, pair, true));
    }
  }
}

// Where heads of at most 16 channels run on the small-head kernel (CPUs with AMX, or AVX-512
// without AVX512-BF16; heads of other widths than 8 and 16), it keeps the softmax weights in
// fp32: only the operands' rounding remains, so the rounded values' double reference holds to
// fp32 matmul accuracy (the GEMM tiles above only to the weights' bf16 rounding, 4e-3). Both of
// its q·k versions: AVX512-BF16 dot products where the CPU has them, and fp32 FMAs.
TEST(Attention, Bf16SmallHeadsMatchDoubleReferenceOfTheRoundedValuesToFp32Accuracy) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  if (detail::small_head_kernel(8) == nullptr) GTEST_SKIP() << "no AVX-512 small-head kernel";
  struct Restore {
    ~Restore() {
      detail::force_small_head_fma(false);
      detail::disable_dot_bf16_for_tests(false);
    }
  } restore;
  detail::disable_dot_bf16_for_tests(true);
  for (const bool fma : {false, true}) {
    detail::force_small_head_fma(fma);
    small_heads_match_reference(fma);
  }
  EXPECT_EQ(detail::small_head_kernel(17), nullptr) << "17 channels must take the GEMM tiles";
}

// Heads of 8, 16, 32, 48 and 64 channels on the AVX512-BF16 kernel: query counts that leave
// every remainder of its 6-, 12- and 24-row blocks, key counts off its 64-key blocks and odd
// ones (a pad key), a single query and key, 4 keys (template pointwise attention's); and column
// attention's transposed views (keys far apart). 8 channels: the last head's values end the
// projection's rows, which the packing must not read past.
TEST(Attention, Bf16DotKernelMatchesDoubleReferenceOfTheRoundedValues) {
  if (detail::dot_bf16_kernel(32) == nullptr) GTEST_SKIP() << "no AVX512-BF16 attention kernel";
  Arena arena = test_arena();
  // {2, 300, 300, 8, 32}: the tiles run head-major (a 2.9 MB pair bias).
  for (const Dims& d : {Dims{1, 1, 1, 1, 32}, Dims{2, 37, 37, 3, 32}, Dims{1, 300, 300, 2, 32},
                        Dims{3, 65, 65, 1, 48}, Dims{2, 23, 23, 2, 64}, Dims{1, 129, 129, 8, 32},
                        Dims{2, 300, 300, 8, 32}, Dims{1, 1, 1, 1, 8}, Dims{3, 53, 53, 8, 8},
                        Dims{2, 130, 130, 2, 8}, Dims{2, 4, 4, 4, 16}, Dims{1, 255, 255, 4, 16},
                        Dims{2, 47, 47, 3, 16}}) {
    const Inputs in(d, 80);
    const Bf16Qkv qkv(in, d);
    const Tensor& r = qkv.rounded.view;
    for (bool pair : {false, true}) {
      const AttentionBias bias = in.bias(pair, true);
      Buffer o(Shape{d.batch, d.query, d.head, d.c});
      Arena exact("exact", dram_tier(), attention_scratch_bytes(d.key, d.c, DType::bf16));
      multi_head_attention(qkv.q, qkv.k, qkv.v, bias, o.view, exact, 1);
      // As the GEMM tiles: the softmax weights' rounding to bf16 remains.
      expect_close(o.data,
                   reference_attention(r.select(2, 0), r.select(2, 1), r.select(2, 2), bias),
                   {4e-3, 1e-2}, "bf16 dot kernel " + name(d, pair, true));
    }
    // Column attention: batch and sequence swapped, so consecutive keys are a whole row apart.
    const Tensor qt = qkv.q.transpose(0, 1), kt = qkv.k.transpose(0, 1), vt = qkv.v.transpose(0, 1);
    Buffer out(Shape{d.query, d.batch, d.head, d.c});
    Buffer mask(Shape{d.query, d.batch});
    fill_normal(mask.data, 81, 1.f);
    const AttentionBias bias{Tensor(), mask.view};
    multi_head_attention(qt, kt, vt, bias, out.view, arena);
    expect_close(out.data,
                 reference_attention(r.select(2, 0).transpose(0, 1), r.select(2, 1).transpose(0, 1),
                                     r.select(2, 2).transpose(0, 1), bias),
                 {4e-3, 1e-2}, "bf16 dot kernel, transposed " + name(d, false, true));
  }
  EXPECT_EQ(detail::dot_bf16_kernel(12), nullptr) << "12 channels take the small-head kernel";
  EXPECT_EQ(detail::dot_bf16_kernel(40), nullptr) << "40 channels take the GEMM tiles";
}

// The kernel reads q, k and v as bf16 pairs: an odd leading dimension or address is refused
// (attention then takes the GEMM tiles), as are keys beyond 32-bit gather offsets.
TEST(Attention, Bf16DotKernelRefusesOperandsItCannotReadAsPairs) {
  alignas(64) static const bf16 data[8] = {};
  EXPECT_TRUE(detail::dot_bf16_fits(data, 32, data, 96, data + 2, 96, 512));
  EXPECT_FALSE(detail::dot_bf16_fits(data + 1, 32, data, 96, data, 96, 512));
  EXPECT_FALSE(detail::dot_bf16_fits(data, 32, data, 97, data, 96, 512));
  EXPECT_FALSE(detail::dot_bf16_fits(data, 32, data, 96, data, 33, 512));
  EXPECT_FALSE(detail::dot_bf16_fits(data, 32, data, 1 << 20, data, 96, 1 << 13));
}

// A NaN logit (NaN activations upstream) makes its query's output NaN in the hand-written
// kernels too (AVX512-BF16, 8 and 32 channels; small heads, 8), where the run's finite check
// catches it; the other queries stay finite.
TEST(Attention, Bf16KernelsKeepANaNLogit) {
  if (!bf16_support().available || detail::small_head_kernel(8) == nullptr) {
    GTEST_SKIP() << "no AVX-512 small-head kernel";
  }
  Arena arena = test_arena();
  struct Restore {
    ~Restore() { detail::disable_dot_bf16_for_tests(false); }
  } restore;
  for (const auto& [c, dot] : {std::pair{8, true}, std::pair{8, false}, std::pair{32, true}}) {
    detail::disable_dot_bf16_for_tests(!dot);
    const Dims d{1, 20, 20, 1, c};
    Inputs in(d, 71);
    in.pair.data[3 * 20 + 17] = NAN;  // query 3, key 17
    const Bf16Qkv qkv(in, d);
    Buffer o(Shape{d.batch, d.query, d.head, d.c});
    multi_head_attention(qkv.q, qkv.k, qkv.v, in.bias(true, true), o.view, arena);
    for (std::int64_t i = 0; i < d.query; ++i) {
      EXPECT_EQ(std::isnan(at(o.view, {0, i, 0, 0})), i == 3) << "query " << i << ", c " << c;
    }
  }
}

TEST(Attention, Bf16ResultsDoNotDependOnChunkOrThreads) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  Arena arena = test_arena();
  const Dims d{11, 40, 40, 4, 32};
  const Inputs in(d);
  const Bf16Qkv qkv(in, d);
  const AttentionBias bias = in.bias(true, true);
  Buffer all(Shape{d.batch, d.query, d.head, d.c});
  multi_head_attention(qkv.q, qkv.k, qkv.v, bias, all.view, arena, 0);
  for (std::int64_t chunk : {1, 3, 100}) {
    Buffer o(Shape{d.batch, d.query, d.head, d.c});
    multi_head_attention(qkv.q, qkv.k, qkv.v, bias, o.view, arena, chunk);
    EXPECT_EQ(o.data, all.data) << "chunk " << chunk << " is not bitwise identical";
  }
  const int threads = omp_get_max_threads();
  for (int n : {1, 3}) {
    omp_set_num_threads(n);
    Buffer o(Shape{d.batch, d.query, d.head, d.c});
    multi_head_attention(qkv.q, qkv.k, qkv.v, bias, o.view, arena, 2);
    EXPECT_EQ(o.data, all.data) << n << " threads are not bitwise identical";
  }
  omp_set_num_threads(threads);
}

TEST(Attention, Bf16ScratchIsWithinItsPlan) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  const Dims d{3, 300, 300, 8, 32};
  const Inputs in(d);
  const Bf16Qkv qkv(in, d);
  Buffer o(Shape{d.batch, d.query, d.head, d.c});
  Arena exact("exact", dram_tier(), attention_scratch_bytes(d.key, d.c, DType::bf16));
  EXPECT_NO_THROW(multi_head_attention(qkv.q, qkv.k, qkv.v, in.bias(true, true), o.view, exact, 1));
  // More than the logits tiles alone: the bf16 GEMM tiles' weights and products.
  const auto logits_tiles = static_cast<std::size_t>(omp_get_max_threads()) *
                            static_cast<std::size_t>(attention_query_tile(d.key) * d.key) *
                            sizeof(float);
  EXPECT_GT(attention_scratch_bytes(d.key, d.c, DType::bf16), logits_tiles);
}

TEST(Attention, FullyMaskedRowAveragesValuesLikeAf2) {
  // In f32, logit - 1e9 rounds to -1e9 for every key, so AF2 attends uniformly over a fully
  // masked row; the double reference would still see the logits. Batch row 0 is fully masked.
  Arena arena = test_arena();
  const Dims d{2, 3, 5, 2, 4};
  Inputs in(d);
  for (std::int64_t j = 0; j < d.key; ++j) in.mask.data[static_cast<std::size_t>(j)] = -1e9f;
  Buffer o(Shape{d.batch, d.query, d.head, d.c});
  const AttentionBias bias = in.bias(false, true);
  multi_head_attention(in.q.view, in.k.view, in.v.view, bias, o.view, arena);
  auto want = reference_attention(in.q.view, in.k.view, in.v.view, bias);
  for (std::int64_t i = 0; i < d.query; ++i)
    for (std::int64_t h = 0; h < d.head; ++h)
      for (std::int64_t c = 0; c < d.c; ++c) {
        double mean = 0.0;
        for (std::int64_t j = 0; j < d.key; ++j) mean += at(in.v.view, {0, j, h, c}) / d.key;
        want[static_cast<std::size_t>((i * d.head + h) * d.c + c)] = mean;
      }
  expect_close(o.data, want, kF32Matmul, "fully masked row");
}

// fp32 heads of 32 channels: a logits tile per thread, and the dense copies of q, k, v and the
// product that the GEMM tiles multiply (a query tile and 8 rows' k and v), nothing per query.
TEST(Attention, ScratchIsOneLogitsTileAndDenseOperandsPerThread) {
  EXPECT_EQ(attention_query_tile(128), 256);
  EXPECT_EQ(attention_query_tile(1000), 64);
  EXPECT_EQ(attention_query_tile(100000), 8);
  const Dims d{4, 100, 1000, 8, 32};
  const Inputs in(d);
  const auto threads = static_cast<std::size_t>(omp_get_max_threads());
  const auto key = static_cast<std::size_t>(d.key), c = static_cast<std::size_t>(d.c);
  const std::size_t tile = 64, dense = 8 * (2 * key * c + 2 * tile * c);
  EXPECT_LE(attention_scratch_bytes(d.key, d.c),
            threads * (tile * key + dense) * sizeof(float) + 2 * 4096);
  Arena exact("exact", dram_tier(), attention_scratch_bytes(d.key, d.c));
  Buffer o(Shape{d.batch, d.query, d.head, d.c});
  EXPECT_NO_THROW(
      multi_head_attention(in.q.view, in.k.view, in.v.view, in.bias(true, true), o.view, exact, 1));
}

TEST(Attention, RejectsMismatchedShapes) {
  Arena arena = test_arena();
  const Dims d{2, 3, 4, 2, 8};
  const Inputs in(d);
  Buffer o(Shape{2, 3, 2, 8}), bad_pair(Shape{2, 4, 3}), bad_o(Shape{2, 3, 2, 7});
  EXPECT_THROW(multi_head_attention(in.q.view, in.k.view, in.v.view, {bad_pair.view, Tensor()},
                                    o.view, arena),
               InternalError);
  EXPECT_THROW(multi_head_attention(in.q.view, in.k.view, in.v.view, {}, bad_o.view, arena),
               InternalError);
  EXPECT_THROW(multi_head_attention(in.q.view, in.q.view, in.v.view, {}, o.view, arena),
               InternalError);
}

}  // namespace
}  // namespace cpufold::testing
