// Triangle modules (AF2 Alg. 11-14) beyond the all-ones-mask reference: masked pairs against a
// naive double-precision implementation, and results that must not depend on the chunk size
// or the thread count. Weights are the tiny model_1_ptm parameters.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/tensor_copy.h"
#include "ops/compute_precision.h"
#include "ops/param_scope.h"
#include "tests/support/parity.h"

namespace cpufold::testing {
namespace {

using Direction = TriangleMultiplication::Direction;
using Node = TriangleAttention::Node;

struct TinyModel {
  WeightStore store = WeightStore::open(tiny_params("model_1_ptm"));
  ModelConfig cfg = ModelConfig::from_weights(store);
  // Block 1, so that the stacked-weights index is exercised beyond 0.
  ParamScope block{store, "evoformer/evoformer_iteration", 1, cfg.n_evoformer_blocks};
};

TinyModel& tiny() {
  static TinyModel model;
  return model;
}

std::vector<float> random_normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// pair_mask[i, j] = s_i·s_j with residues `masked` left out, as AF2 builds it from seq_mask,
// plus (if `extra`) a few single masked pairs.
std::vector<float> pair_mask(std::int64_t n, std::vector<std::int64_t> masked, bool extra) {
  std::vector<float> s(static_cast<std::size_t>(n), 1.f), m(static_cast<std::size_t>(n * n));
  for (std::int64_t r : masked) s[static_cast<std::size_t>(r)] = 0.f;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      m[static_cast<std::size_t>(i * n + j)] =
          s[static_cast<std::size_t>(i)] * s[static_cast<std::size_t>(j)];
  if (extra) {
    for (std::int64_t i = 0; i < n; ++i) m[static_cast<std::size_t>(i * n + (i * 5 + 2) % n)] = 0.f;
  }
  return m;
}

// ---- naive double-precision references, straight from the supplement ------------------------

struct Params {
  const ParamScope scope;
  std::vector<double> get(const std::string& sub, const std::string& name,
                          const Shape& shape) const {
    const Tensor t = (sub.empty() ? scope : scope / sub).get(name, shape);
    std::vector<float> f(static_cast<std::size_t>(t.numel()));
    convert_tensor(t, Tensor(f.data(), DType::f32, t.shape()));
    return {f.begin(), f.end()};
  }
};

std::vector<double> layer_norm(const std::vector<double>& x, std::int64_t c, const Params& p,
                               const std::string& sub) {
  const auto scale = p.get(sub, "scale", {c}), offset = p.get(sub, "offset", {c});
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size() / static_cast<std::size_t>(c); ++r) {
    const double* xr = &x[r * static_cast<std::size_t>(c)];
    double mean = 0, var = 0;
    for (std::int64_t k = 0; k < c; ++k) mean += xr[k];
    mean /= static_cast<double>(c);
    for (std::int64_t k = 0; k < c; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    var /= static_cast<double>(c);
    for (std::int64_t k = 0; k < c; ++k) {
      y[r * static_cast<std::size_t>(c) + static_cast<std::size_t>(k)] =
          (xr[k] - mean) / std::sqrt(var + 1e-5) * scale[static_cast<std::size_t>(k)] +
          offset[static_cast<std::size_t>(k)];
    }
  }
  return y;
}

// x [rows, c_in] · w [c_in, c_out] + b.
std::vector<double> linear(const std::vector<double>& x, std::int64_t c_in, std::int64_t c_out,
                           const std::vector<double>& w, const std::vector<double>& b) {
  const std::size_t rows = x.size() / static_cast<std::size_t>(c_in);
  std::vector<double> y(rows * static_cast<std::size_t>(c_out));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < c_out; ++o) {
      double acc = b.empty() ? 0.0 : b[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < c_in; ++i)
        acc += x[r * static_cast<std::size_t>(c_in) + static_cast<std::size_t>(i)] *
               w[static_cast<std::size_t>(i * c_out + o)];
      y[r * static_cast<std::size_t>(c_out) + static_cast<std::size_t>(o)] = acc;
    }
  return y;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// z + TriangleMultiplication(z), AF2 Alg. 11/12 with DeepMind's einsums over (left, right):
// outgoing 'ikc,jkc->ijc', incoming 'kjc,kic->ijc'.
std::vector<float> naive_tri_mul(const Params& p, const std::vector<float>& z,
                                 const std::vector<float>& mask, std::int64_t n, std::int64_t c_z,
                                 std::int64_t c, Direction dir) {
  const std::vector<double> z64(z.begin(), z.end());
  const auto x = layer_norm(z64, c_z, p, "layer_norm_input");
  auto proj = [&](const char* name, std::int64_t out) {
    return linear(x, c_z, out, p.get(name, "weights", {c_z, out}), p.get(name, "bias", {out}));
  };
  auto left = proj("left_projection", c), right = proj("right_projection", c);
  const auto lg = proj("left_gate", c), rg = proj("right_gate", c), g = proj("gating_linear", c_z);
  for (std::size_t r = 0; r < left.size(); ++r) {
    const double m = mask[r / static_cast<std::size_t>(c)];
    left[r] *= sigmoid(lg[r]) * m;
    right[r] *= sigmoid(rg[r]) * m;
  }
  std::vector<double> prod(static_cast<std::size_t>(n * n * c));
  auto at = [&](const std::vector<double>& t, std::int64_t i, std::int64_t j, std::int64_t ch) {
    return t[static_cast<std::size_t>((i * n + j) * c + ch)];
  };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t ch = 0; ch < c; ++ch) {
        double acc = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          acc += dir == Direction::outgoing ? at(left, i, k, ch) * at(right, j, k, ch)
                                            : at(left, k, j, ch) * at(right, k, i, ch);
        }
        prod[static_cast<std::size_t>((i * n + j) * c + ch)] = acc;
      }
  const auto normed = layer_norm(prod, c, p, "center_layer_norm");
  const auto out = linear(normed, c, c_z, p.get("output_projection", "weights", {c, c_z}),
                          p.get("output_projection", "bias", {c_z}));
  std::vector<float> result(z.size());
  for (std::size_t r = 0; r < z.size(); ++r)
    result[r] = static_cast<float>(z64[r] + out[r] * sigmoid(g[r]));
  return result;
}

// z + TriangleAttention(z), AF2 Alg. 13/14 (OpenFold's formulation: the ending node is the
// starting node on zᵀ). The mask bias is added in fp32 as the models do, so a fully masked
// row softmaxes to uniform as it does there.
std::vector<float> naive_tri_att(const Params& p, const std::vector<float>& z,
                                 const std::vector<float>& mask, std::int64_t n, std::int64_t c_z,
                                 const AttentionDims& d, Node node) {
  const std::int64_t nh = d.n_head, ch = d.c_hidden, hc = nh * ch;
  std::vector<double> zt(z.size());
  std::vector<float> mt(mask.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t src = node == Node::starting ? i * n + j : j * n + i;
      mt[static_cast<std::size_t>(i * n + j)] = mask[static_cast<std::size_t>(src)];
      for (std::int64_t k = 0; k < c_z; ++k)
        zt[static_cast<std::size_t>((i * n + j) * c_z + k)] =
            z[static_cast<std::size_t>(src * c_z + k)];
    }
  const auto x = layer_norm(zt, c_z, p, "query_norm");
  const auto tb = linear(x, c_z, nh, p.get("", "feat_2d_weights", {c_z, nh}), {});
  const Shape w{c_z, nh, ch};
  const auto q = linear(x, c_z, hc, p.get("attention", "query_w", w), {});
  const auto k = linear(x, c_z, hc, p.get("attention", "key_w", w), {});
  const auto v = linear(x, c_z, hc, p.get("attention", "value_w", w), {});
  const auto g = linear(x, c_z, hc, p.get("attention", "gating_w", w),
                        p.get("attention", "gating_b", {nh, ch}));
  std::vector<double> o(static_cast<std::size_t>(n * n * hc)), logits(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t h = 0; h < nh; ++h) {
        double max = -INFINITY, sum = 0;
        for (std::int64_t kk = 0; kk < n; ++kk) {
          double l = 0;
          for (std::int64_t e = 0; e < ch; ++e)
            l += q[static_cast<std::size_t>((i * n + j) * hc + h * ch + e)] *
                 k[static_cast<std::size_t>((i * n + kk) * hc + h * ch + e)];
          l = l / std::sqrt(static_cast<double>(ch)) +
              tb[static_cast<std::size_t>((j * n + kk) * nh + h)];
          const float mb = 1e9f * (mt[static_cast<std::size_t>(i * n + kk)] - 1.f);
          if (mb != 0.f) l = static_cast<double>(static_cast<float>(l) + mb);
          logits[static_cast<std::size_t>(kk)] = l;
          max = std::max(max, l);
        }
        for (double& l : logits) sum += l = std::exp(l - max);
        for (std::int64_t e = 0; e < ch; ++e) {
          double acc = 0;
          for (std::int64_t kk = 0; kk < n; ++kk)
            acc += logits[static_cast<std::size_t>(kk)] / sum *
                   v[static_cast<std::size_t>((i * n + kk) * hc + h * ch + e)];
          const std::size_t at = static_cast<std::size_t>((i * n + j) * hc + h * ch + e);
          o[at] = acc * sigmoid(g[at]);
        }
      }
  const auto out = linear(o, hc, c_z, p.get("attention", "output_w", {nh, ch, c_z}),
                          p.get("attention", "output_b", {c_z}));
  std::vector<float> result(z.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t dst = node == Node::starting ? i * n + j : j * n + i;
      for (std::int64_t kk = 0; kk < c_z; ++kk) {
        const std::size_t a = static_cast<std::size_t>(dst * c_z + kk);
        result[a] = static_cast<float>(static_cast<double>(z[a]) +
                                       out[static_cast<std::size_t>((i * n + j) * c_z + kk)]);
      }
    }
  return result;
}

// Block 0's parameter scope of each module.
const char* module_name(Direction d) {
  return d == Direction::outgoing ? "triangle_multiplication_outgoing"
                                  : "triangle_multiplication_incoming";
}
const char* module_name(Node n) {
  return n == Node::starting ? "triangle_attention_starting_node"
                             : "triangle_attention_ending_node";
}

// ---- runners --------------------------------------------------------------------------------

// Block 0's module of each direction or node, its Linears computing in `precision`.
TriangleMultiplication module_for(Direction dir, DType precision = DType::f32) {
  return TriangleMultiplication(tiny().block.with_precision(precision) / module_name(dir),
                                tiny().cfg.c_z, tiny().cfg.c_hidden_tri_mul, dir);
}
TriangleAttention module_for(Node node, DType precision = DType::f32) {
  return TriangleAttention(tiny().block.with_precision(precision) / module_name(node),
                           tiny().cfg.c_z, tiny().cfg.triangle_attention, node);
}

// The module of `kind` on a copy of z0 under `mask` with `chunk`; its scratch must come back.
template <typename Kind>
std::vector<float> run_module(Kind kind, const std::vector<float>& z0,
                              const std::vector<float>& mask, std::int64_t n, std::int64_t chunk,
                              DType precision = DType::f32) {
  const auto mod = module_for(kind, precision);
  std::vector<float> z = z0, mk = mask;
  Arena arena = sized_arena(mod.scratch_bytes(n, chunk));
  RunContext ctx;
  ctx.scratch = &arena;
  ctx.chunk = chunk;
  mod.forward(Tensor(z.data(), DType::f32, Shape{n, n, tiny().cfg.c_z}),
              Tensor(mk.data(), DType::f32, Shape{n, n}), ctx);
  EXPECT_EQ(arena.used(), 0u);
  return z;
}

void expect_close(const std::string& what, const std::vector<float>& ours,
                  const std::vector<float>& want, const Shape& shape, Tolerance tol) {
  std::vector<float> copy = ours;
  const auto r = matches_reference(what, Tensor(copy.data(), DType::f32, shape), want, shape, tol);
  if (r) std::cout << "[ close    ] " << r.message() << "\n";
  EXPECT_TRUE(r);
}

// The naive version of either module, with the tiny model's sizes.
std::vector<float> naive_update(const Params& p, const std::vector<float>& z,
                                const std::vector<float>& mask, std::int64_t n, std::int64_t c_z,
                                Direction dir) {
  return naive_tri_mul(p, z, mask, n, c_z, tiny().cfg.c_hidden_tri_mul, dir);
}
std::vector<float> naive_update(const Params& p, const std::vector<float>& z,
                                const std::vector<float>& mask, std::int64_t n, std::int64_t c_z,
                                Node node) {
  return naive_tri_att(p, z, mask, n, c_z, tiny().cfg.triangle_attention, node);
}

// The module on 13 residues of random pairs, `masked` rows and columns masked, unchunked,
// against its naive version.
template <typename Kind>
void expect_matches_naive(const std::string& what, Kind kind, std::uint32_t seed,
                          std::vector<std::int64_t> masked) {
  const std::int64_t n = 13, c_z = tiny().cfg.c_z;
  const auto z = random_normal(static_cast<std::size_t>(n * n * c_z), seed);
  const auto mask = pair_mask(n, std::move(masked), true);
  const auto want = naive_update(Params{tiny().block / module_name(kind)}, z, mask, n, c_z, kind);
  expect_close(what, run_module(kind, z, mask, n, 0), want, Shape{n, n, c_z},
               kRepresentationTolerance);
}

// ---- tests ----------------------------------------------------------------------------------

class TriangleMultiplicationTest : public ::testing::TestWithParam<Direction> {};
class TriangleAttentionTest : public ::testing::TestWithParam<Node> {};

const char* name(Direction d) {
  return d == Direction::outgoing ? "outgoing" : "incoming";
}
const char* name(Node n) {
  return n == Node::starting ? "starting" : "ending";
}

TEST_P(TriangleMultiplicationTest, MaskedPairsMatchNaiveReference) {
  expect_matches_naive(std::string("tri_mul ") + name(GetParam()), GetParam(), 7, {3, 11});
}

TEST_P(TriangleMultiplicationTest, IndependentOfChunkAndThreads) {
  const Direction dir = GetParam();
  const std::int64_t n = 45, c_z = tiny().cfg.c_z;  // 2025 pairs: 3 blocks and a tail
  const auto z = random_normal(static_cast<std::size_t>(n * n * c_z), 11);
  const auto mask = pair_mask(n, {5}, true);
  const int threads = omp_get_max_threads();
  const auto base = run_module(dir, z, mask, n, 0);
  const Shape shape{n, n, c_z};
  for (const std::int64_t chunk : {1L, 17L, 30L, 50L}) {
    expect_close("chunk " + std::to_string(chunk), run_module(dir, z, mask, n, chunk), base, shape,
                 kChunkInvarianceTolerance);
  }
  for (const int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    const auto got = run_module(dir, z, mask, n, 0);
    omp_set_num_threads(threads);
    // The per-channel products are bitwise independent of the thread count; oneDNN's matmul
    // behind Linear may differ in the last bits for some row counts.
    expect_close("threads " + std::to_string(t), got, base, shape, kChunkInvarianceTolerance);
    if (std::memcmp(got.data(), base.data(), got.size() * sizeof(float)) != 0) {
      std::cout << "[ note     ] " << t << " threads: equal within tolerance, not bitwise\n";
    }
  }
}

// The chunk bounds the transient: beyond the right edge over all pairs (c·n² floats, which no
// slab order avoids), scratch grows by O(rows·n·c) for slabs of the chunk's rows clamped to
// [16, 64], plus fixed pair blocks, where the whole-matrix version took 2·c·n² + threads·n²
// floats at any chunk.
TEST_P(TriangleMultiplicationTest, ScratchIsBoundedByTheChunk) {
  TinyModel& m = tiny();
  const Direction dir = GetParam();
  const TriangleMultiplication mod = module_for(dir);
  const std::size_t n = 200, c = static_cast<std::size_t>(m.cfg.c_hidden_tri_mul);
  const std::size_t threads = static_cast<std::size_t>(omp_get_max_threads());
  const std::size_t edge = c * n * n * sizeof(float);
  const std::size_t whole_matrix = 2 * edge + threads * n * n * sizeof(float);
  const auto slab = [&](std::size_t rows) { return (c + threads) * rows * n * sizeof(float); };
  const std::size_t small = mod.scratch_bytes(200, 4), larger = mod.scratch_bytes(200, 32);
  std::cout << "[ scratch  ] n 200: chunk 4 " << small << " B, chunk 32 " << larger
            << " B, unchunked " << mod.scratch_bytes(200, 0) << " B\n";
  constexpr std::size_t kFixedBlocks = 2u << 20;  // pair blocks of 512 rows and Linear scratch
  EXPECT_LE(small, edge + slab(16) + 2 * 4096 + kFixedBlocks);
  EXPECT_LT(small, whole_matrix);
  EXPECT_LT(small, mod.scratch_bytes(200, 0));
  EXPECT_EQ(mod.scratch_bytes(200, 1), mod.scratch_bytes(200, 16));
  // Doubling the chunk adds slabs of its rows, not another pair matrix.
  EXPECT_GT(larger, small);
  EXPECT_LE(larger - small, slab(16) + 2 * 4096);
}

// forward() in arenas of exactly what the module plans: scratch_bytes() with the right edge in
// the same arena, and scratch_bytes(edge_apart) beside an activations arena of exactly
// edge_bytes(). An allocation the buffer lists do not cover throws BudgetError. In fp32 and bf16,
// unchunked and with slabs of 17 of 45 rows (a shorter last slab).
TEST_P(TriangleMultiplicationTest, ForwardFitsExactScratchAndEdgeBytes) {
  const std::int64_t n = 45, c_z = tiny().cfg.c_z;
  const auto z0 = random_normal(static_cast<std::size_t>(n * n * c_z), 23);
  auto mask = pair_mask(n, {5}, true);
  const auto exact = [](std::size_t bytes) {
    return Arena("exact", dram_tier(), std::max<std::size_t>(bytes, 64));
  };
  for (const DType precision : {DType::f32, DType::bf16}) {
    if (precision == DType::bf16 && !bf16_support().available) continue;
    const TriangleMultiplication mod = module_for(GetParam(), precision);
    for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{17}}) {
      for (const bool apart : {false, true}) {
        SCOPED_TRACE(std::string(precision == DType::bf16 ? "bf16" : "fp32") + " chunk " +
                     std::to_string(chunk) + (apart ? ", edge apart" : ""));
        Arena scratch = exact(mod.scratch_bytes(n, chunk, apart));
        Arena activations = exact(apart ? mod.edge_bytes(n) : 0);
        RunContext ctx;
        ctx.scratch = &scratch;
        ctx.activations = apart ? &activations : nullptr;
        ctx.chunk = chunk;
        std::vector<float> z = z0;
        EXPECT_NO_THROW(mod.forward(Tensor(z.data(), DType::f32, Shape{n, n, c_z}),
                                    Tensor(mask.data(), DType::f32, Shape{n, n}), ctx));
        EXPECT_EQ(scratch.used(), 0u);
        EXPECT_EQ(activations.used(), 0u);
      }
    }
  }
}

TEST_P(TriangleAttentionTest, MaskedPairsMatchNaiveReference) {
  expect_matches_naive(std::string("tri_att ") + name(GetParam()), GetParam(), 17, {0, 6});
}

TEST_P(TriangleAttentionTest, IndependentOfChunk) {
  const Node node = GetParam();
  const Hdf5TensorReader ref(tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5"));
  const OwnedTensor z(ref, "evoformer_block0_steps_iter0/z_06");
  const std::int64_t n = z.view.dim(0);
  const auto mask = pair_mask(n, {4}, true);
  const auto base = run_module(node, z.data, mask, n, 0);
  for (const std::int64_t chunk : {std::int64_t{1}, std::int64_t{3}, std::int64_t{8}, n + 5}) {
    expect_close("chunk " + std::to_string(chunk), run_module(node, z.data, mask, n, chunk), base,
                 z.view.shape(), kChunkInvarianceTolerance);
  }
}

// Relative RMS of the difference between two updates of z0.
double relative_update_difference(const std::vector<float>& a, const std::vector<float>& b,
                                  const std::vector<float>& z0) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += std::pow(double{a[i]} - double{b[i]}, 2);
    norm += std::pow(double{b[i]} - double{z0[i]}, 2);
  }
  return std::sqrt(diff / norm);
}

// Built under bf16 compute (as in the trunk's stacks), a module's update differs from fp32 by
// bf16 rounding and nothing more, does not depend on the chunk, and stays within its planned
// scratch (run_module's sized arena).
template <typename Kind>
void expect_bf16_close_to_fp32(Kind kind, std::int64_t n, const std::vector<float>& z,
                               const std::vector<float>& mask) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  const auto fp32 = run_module(kind, z, mask, n, 0);
  const auto base = run_module(kind, z, mask, n, 0, DType::bf16);
  const double rel = relative_update_difference(base, fp32, z);
  std::cout << "[ bf16     ] relative RMS of the update vs fp32: " << rel << "\n";
  EXPECT_GT(rel, 1e-4) << "no bf16 rounding seen";
  EXPECT_LT(rel, 2e-2) << "more than bf16 rounding";
  const Shape shape{n, n, tiny().cfg.c_z};
  for (const std::int64_t chunk : {std::int64_t{1}, std::int64_t{17}, n + 5}) {
    expect_close("bf16 chunk " + std::to_string(chunk),
                 run_module(kind, z, mask, n, chunk, DType::bf16), base, shape,
                 kChunkInvarianceTolerance);
  }
}

TEST_P(TriangleMultiplicationTest, Bf16ComputeIsFp32WithinBf16Rounding) {
  const std::int64_t n = 45, c_z = tiny().cfg.c_z;
  expect_bf16_close_to_fp32(GetParam(), n, random_normal(static_cast<std::size_t>(n * n * c_z), 13),
                            pair_mask(n, {5}, true));
}

TEST_P(TriangleAttentionTest, Bf16ComputeIsFp32WithinBf16Rounding) {
  const std::int64_t n = 30, c_z = tiny().cfg.c_z;
  expect_bf16_close_to_fp32(GetParam(), n, random_normal(static_cast<std::size_t>(n * n * c_z), 19),
                            pair_mask(n, {4}, true));
}

INSTANTIATE_TEST_SUITE_P(Both, TriangleMultiplicationTest,
                         ::testing::Values(Direction::outgoing, Direction::incoming),
                         [](const auto& info) { return std::string(name(info.param)); });
INSTANTIATE_TEST_SUITE_P(Both, TriangleAttentionTest,
                         ::testing::Values(Node::starting, Node::ending),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
}  // namespace cpufold::testing
