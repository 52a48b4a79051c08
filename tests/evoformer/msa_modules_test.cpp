// The MSA-side modules (AF2 Alg. 7, 8, 9/15, 10, 19) on the tiny model's weights against naive
// double-precision implementations written here from the supplement's pseudocode, with random
// activations and masks that contain zeros (the reference files only have all-ones masks), and
// chunk invariance (chunk 1, 3, 8 and all must agree to fp32 rounding). Both the Evoformer's
// and the extra-MSA stack's scopes are exercised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "evoformer/msa_column_attention.h"
#include "evoformer/msa_column_global_attention.h"
#include "evoformer/msa_row_attention_with_pair_bias.h"
#include "evoformer/outer_product_mean.h"
#include "evoformer/transition.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/file_tier.h"
#include "memory/spill_dir.h"
#include "ops/compute_precision.h"
#include "ops/param_scope.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/parity.h"

namespace cpufold::testing {
namespace {

using Vec = std::vector<double>;

// ---- naive double-precision building blocks ------------------------------------------------

// Any f32 parameter as doubles, row-major.
Vec param(const ParamScope& scope, const std::string& name, const Shape& shape) {
  const Tensor t = scope.get(name, shape);
  const float* p = t.data_as<float>();
  return Vec(p, p + t.numel());
}

struct NaiveLayerNorm {
  Vec scale, offset;
  NaiveLayerNorm(const ParamScope& scope, std::int64_t c)
      : scale(param(scope, "scale", {c})), offset(param(scope, "offset", {c})) {}
  // x: rows x c -> normalised rows.
  Vec operator()(const Vec& x) const {
    const std::size_t c = scale.size(), rows = x.size() / c;
    Vec y(x.size());
    for (std::size_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (std::size_t k = 0; k < c; ++k) mean += x[r * c + k];
      mean /= static_cast<double>(c);
      for (std::size_t k = 0; k < c; ++k) var += (x[r * c + k] - mean) * (x[r * c + k] - mean);
      var /= static_cast<double>(c);
      const double inv = 1.0 / std::sqrt(var + 1e-5);
      for (std::size_t k = 0; k < c; ++k)
        y[r * c + k] = (x[r * c + k] - mean) * inv * scale[k] + offset[k];
    }
    return y;
  }
};

// y[rows, n_out] = x[rows, n_in] · w[n_in, n_out] (+ b).
Vec matmul(const Vec& x, const Vec& w, std::size_t n_in, const Vec* b = nullptr) {
  const std::size_t n_out = w.size() / n_in, rows = x.size() / n_in;
  Vec y(rows * n_out, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < n_in; ++k) {
      const double xv = x[r * n_in + k];
      for (std::size_t o = 0; o < n_out; ++o) y[r * n_out + o] += xv * w[k * n_out + o];
    }
    if (b)
      for (std::size_t o = 0; o < n_out; ++o) y[r * n_out + o] += (*b)[o];
  }
  return y;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

void softmax(double* x, std::size_t n) {
  double mx = x[0], sum = 0;
  for (std::size_t i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  for (std::size_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  for (std::size_t i = 0; i < n; ++i) x[i] /= sum;
}

// Gated self-attention (the `attention` scope): x [B, L, c_in] normalised, pair bias [H, L, L]
// (or empty), key mask [B, L] -> out [B, L, c_out].
Vec naive_attention(const ParamScope& s, const Vec& x, std::size_t n_batch, std::size_t len,
                    std::int64_t c_in, AttentionDims d, std::int64_t c_out, const Vec& pair_bias,
                    const Vec& mask) {
  const std::size_t H = static_cast<std::size_t>(d.n_head),
                    C = static_cast<std::size_t>(d.c_hidden);
  const Vec wq = param(s, "query_w", {c_in, d.n_head, d.c_hidden});
  const Vec wk = param(s, "key_w", {c_in, d.n_head, d.c_hidden});
  const Vec wv = param(s, "value_w", {c_in, d.n_head, d.c_hidden});
  const Vec wg = param(s, "gating_w", {c_in, d.n_head, d.c_hidden});
  const Vec bg = param(s, "gating_b", {d.n_head, d.c_hidden});
  const Vec wo = param(s, "output_w", {d.n_head, d.c_hidden, c_out});
  const Vec bo = param(s, "output_b", {c_out});
  const std::size_t ci = static_cast<std::size_t>(c_in);
  const Vec q = matmul(x, wq, ci), k = matmul(x, wk, ci), v = matmul(x, wv, ci);
  Vec g = matmul(x, wg, ci, &bg);
  Vec o(n_batch * len * H * C, 0.0);
  Vec logits(len);
  for (std::size_t b = 0; b < n_batch; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < len; ++i) {
        for (std::size_t j = 0; j < len; ++j) {
          double dot = 0;
          for (std::size_t c = 0; c < C; ++c)
            dot += q[((b * len + i) * H + h) * C + c] * k[((b * len + j) * H + h) * C + c];
          logits[j] = dot / std::sqrt(static_cast<double>(C)) + 1e9 * (mask[b * len + j] - 1.0) +
                      (pair_bias.empty() ? 0.0 : pair_bias[(h * len + i) * len + j]);
        }
        softmax(logits.data(), len);
        for (std::size_t j = 0; j < len; ++j)
          for (std::size_t c = 0; c < C; ++c)
            o[((b * len + i) * H + h) * C + c] += logits[j] * v[((b * len + j) * H + h) * C + c];
      }
  for (std::size_t t = 0; t < g.size(); ++t) g[t] = sigmoid(g[t]) * o[t];
  return matmul(g, wo, H * C, &bo);
}

// [A, B, c] -> [B, A, c]
Vec swap01(const Vec& x, std::size_t a, std::size_t b) {
  const std::size_t c = x.size() / (a * b);
  Vec y(x.size());
  for (std::size_t i = 0; i < a; ++i)
    for (std::size_t j = 0; j < b; ++j)
      for (std::size_t k = 0; k < c; ++k) y[(j * a + i) * c + k] = x[(i * b + j) * c + k];
  return y;
}

// ---- naive modules (each returns the residual update) --------------------------------------

Vec naive_row_attention(const ParamScope& s, std::int64_t c_m, std::int64_t c_z, AttentionDims d,
                        const Vec& m, const Vec& z, const Vec& mask, std::size_t S, std::size_t N) {
  const Vec zn = NaiveLayerNorm(s / "feat_2d_norm", c_z)(z);
  const Vec proj = matmul(zn, param(s, "feat_2d_weights", {c_z, d.n_head}),
                          static_cast<std::size_t>(c_z));  // [N, N, H]
  const std::size_t H = static_cast<std::size_t>(d.n_head);
  Vec bias(H * N * N);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t h = 0; h < H; ++h) bias[(h * N + i) * N + j] = proj[(i * N + j) * H + h];
  const Vec x = NaiveLayerNorm(s / "query_norm", c_m)(m);
  return naive_attention(s / "attention", x, S, N, c_m, d, c_m, bias, mask);
}

Vec naive_column_attention(const ParamScope& s, std::int64_t c_m, AttentionDims d, const Vec& m,
                           const Vec& mask, std::size_t S, std::size_t N) {
  const Vec x = NaiveLayerNorm(s / "query_norm", c_m)(swap01(m, S, N));
  const Vec mask_t = swap01(mask, S, N);
  return swap01(naive_attention(s / "attention", x, N, S, c_m, d, c_m, {}, mask_t), N, S);
}

Vec naive_transition(const ParamScope& s, std::int64_t c, std::int64_t factor, const Vec& x,
                     const Vec* mask) {
  const Vec xn = NaiveLayerNorm(s / "input_layer_norm", c)(x);
  const Vec b1 = param(s / "transition1", "bias", {factor * c});
  Vec h = matmul(xn, param(s / "transition1", "weights", {c, factor * c}),
                 static_cast<std::size_t>(c), &b1);
  for (double& v : h) v = std::max(v, 0.0);
  const Vec b2 = param(s / "transition2", "bias", {c});
  Vec u = matmul(h, param(s / "transition2", "weights", {factor * c, c}),
                 static_cast<std::size_t>(factor * c), &b2);
  if (mask)
    for (std::size_t t = 0; t < u.size(); ++t) u[t] *= (*mask)[t / static_cast<std::size_t>(c)];
  return u;
}

Vec naive_outer_product_mean(const ParamScope& s, std::int64_t c_m, std::int64_t c_z,
                             std::int64_t c_h, const Vec& m, const Vec& mask, std::size_t S,
                             std::size_t N) {
  const Vec x = NaiveLayerNorm(s / "layer_norm_input", c_m)(m);
  const std::size_t C = static_cast<std::size_t>(c_h), CZ = static_cast<std::size_t>(c_z);
  const Vec bl = param(s / "left_projection", "bias", {c_h});
  const Vec br = param(s / "right_projection", "bias", {c_h});
  Vec a = matmul(x, param(s / "left_projection", "weights", {c_m, c_h}),
                 static_cast<std::size_t>(c_m), &bl);
  Vec b = matmul(x, param(s / "right_projection", "weights", {c_m, c_h}),
                 static_cast<std::size_t>(c_m), &br);
  for (std::size_t t = 0; t < a.size(); ++t) {
    a[t] *= mask[t / C];
    b[t] *= mask[t / C];
  }
  const Vec wo = param(s, "output_w", {c_h, c_h, c_z});
  const Vec bo = param(s, "output_b", {c_z});
  Vec out(N * N * CZ);
  Vec outer(C * C);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      std::fill(outer.begin(), outer.end(), 0.0);
      double norm = 0;
      for (std::size_t q = 0; q < S; ++q) {
        norm += mask[q * N + i] * mask[q * N + j];
        for (std::size_t c1 = 0; c1 < C; ++c1)
          for (std::size_t c2 = 0; c2 < C; ++c2)
            outer[c1 * C + c2] += a[(q * N + i) * C + c1] * b[(q * N + j) * C + c2];
      }
      const Vec u = matmul(outer, wo, C * C, &bo);
      for (std::size_t k = 0; k < CZ; ++k) out[(i * N + j) * CZ + k] = u[k] / (norm + 1e-3);
    }
  return out;
}

// AF2 Alg. 19 straight from the pseudocode, per column j over sequences s.
Vec naive_global_attention(const ParamScope& s, std::int64_t c_e, AttentionDims d, const Vec& m,
                           const Vec& mask, std::size_t S, std::size_t N) {
  const ParamScope a = s / "attention";
  const std::size_t H = static_cast<std::size_t>(d.n_head),
                    C = static_cast<std::size_t>(d.c_hidden);
  const std::size_t CE = static_cast<std::size_t>(c_e);
  const Vec wq = param(a, "query_w", {c_e, d.n_head, d.c_hidden});
  const Vec wk = param(a, "key_w", {c_e, d.c_hidden});
  const Vec wv = param(a, "value_w", {c_e, d.c_hidden});
  const Vec wg = param(a, "gating_w", {c_e, d.n_head, d.c_hidden});
  const Vec bg = param(a, "gating_b", {d.n_head, d.c_hidden});
  const Vec wo = param(a, "output_w", {d.n_head, d.c_hidden, c_e});
  const Vec bo = param(a, "output_b", {c_e});
  const Vec x = NaiveLayerNorm(s / "query_norm", c_e)(m);  // [S, N, c_e]
  const Vec k = matmul(x, wk, CE), v = matmul(x, wv, CE);  // [S, N, C]
  Vec g = matmul(x, wg, CE, &bg);                          // [S, N, H*C]
  Vec out(S * N * CE);
  for (std::size_t j = 0; j < N; ++j) {
    Vec mean(CE, 0.0);
    double count = 0;
    for (std::size_t q = 0; q < S; ++q) {
      count += mask[q * N + j];
      for (std::size_t c = 0; c < CE; ++c) mean[c] += mask[q * N + j] * x[(q * N + j) * CE + c];
    }
    for (double& v_ : mean) v_ /= count + 1e-10;
    const Vec qv = matmul(mean, wq, CE);  // [H*C]
    Vec o(H * C, 0.0), logits(S);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t q = 0; q < S; ++q) {
        double dot = 0;
        for (std::size_t c = 0; c < C; ++c) dot += qv[h * C + c] * k[(q * N + j) * C + c];
        logits[q] = dot / std::sqrt(static_cast<double>(C)) + 1e9 * (mask[q * N + j] - 1.0);
      }
      softmax(logits.data(), S);
      for (std::size_t q = 0; q < S; ++q)
        for (std::size_t c = 0; c < C; ++c) o[h * C + c] += logits[q] * v[(q * N + j) * C + c];
    }
    for (std::size_t q = 0; q < S; ++q) {
      Vec gated(H * C);
      for (std::size_t t = 0; t < H * C; ++t) gated[t] = sigmoid(g[(q * N + j) * H * C + t]) * o[t];
      const Vec u = matmul(gated, wo, H * C, &bo);
      for (std::size_t c = 0; c < CE; ++c) out[(q * N + j) * CE + c] = u[c];
    }
  }
  return out;
}

// ---- fixture --------------------------------------------------------------------------------

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float stddev = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// [S, N] mask with about a quarter zeros; row 0 and column 0 stay 1 so no softmax row is fully
// masked (that case is uniform in fp32 but not in double).
std::vector<float> random_mask(std::size_t rows, std::size_t cols, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution keep(0.75);
  std::vector<float> mask(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      mask[r * cols + c] = (r == 0 || c == 0 || keep(rng)) ? 1.f : 0.f;
  return mask;
}

Vec to_double(const std::vector<float>& v) {
  return Vec(v.begin(), v.end());
}

enum class Stack { evoformer, extra };

// The tiny model_1_ptm weights and block 0 of one stack.
class MsaModulesBase : public ::testing::Test {
 protected:
  explicit MsaModulesBase(Stack stack)
      : store_(WeightStore::open(tiny_params("model_1_ptm"))),
        cfg_(ModelConfig::from_weights(store_)),
        extra_(stack == Stack::extra),
        scope_(store_, extra_ ? "evoformer/extra_msa_stack" : "evoformer/evoformer_iteration", 0,
               extra_ ? cfg_.n_extra_msa_blocks : cfg_.n_evoformer_blocks),
        c_m_(extra_ ? cfg_.c_e : cfg_.c_m) {}

  static constexpr std::size_t S = 7, N = 9;  // odd sizes: chunks 3 and 8 leave remainders

  // Runs `forward(state, ctx)` on a copy of `input` for every chunk size; each result's update
  // must match `want` (naive double) and the unchunked result to chunk-invariance tolerance.
  void check(const std::string& what, const std::vector<float>& input, const Shape& shape,
             const Vec& want, const std::function<std::size_t(std::int64_t)>& scratch_bytes,
             const std::function<void(const Tensor&, const RunContext&)>& forward) {
    std::vector<float> want_f(want.begin(), want.end());
    std::vector<float> unchunked;
    for (const std::int64_t chunk :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{8}}) {
      SCOPED_TRACE(what + " chunk " + std::to_string(chunk));
      Arena arena = sized_arena(scratch_bytes(chunk));
      RunContext ctx;
      ctx.scratch = &arena;
      ctx.chunk = chunk;
      std::vector<float> state = input;
      forward(Tensor(state.data(), DType::f32, shape), ctx);
      EXPECT_EQ(arena.used(), 0u) << "scratch not released";
      std::vector<float> update(state.size());
      for (std::size_t i = 0; i < state.size(); ++i) update[i] = state[i] - input[i];
      const Tensor uv(update.data(), DType::f32, shape);
      const auto r =
          matches_reference(what + " vs naive double", uv, want_f, shape, kRepresentationTolerance);
      if (r) std::cout << "[ naive    ] chunk " << chunk << ": " << r.message() << "\n";
      EXPECT_TRUE(r);
      if (chunk == 0) {
        unchunked = state;
      } else {
        const auto inv = matches_reference(what + " chunked vs unchunked",
                                           Tensor(state.data(), DType::f32, shape), unchunked,
                                           shape, kChunkInvarianceTolerance);
        if (inv) std::cout << "[ chunking ] chunk " << chunk << ": " << inv.message() << "\n";
        EXPECT_TRUE(inv);
      }
    }
  }

  void check_outer_product_mean(std::size_t n_seq, std::uint32_t seed);

  WeightStore store_;
  ModelConfig cfg_;
  bool extra_;
  ParamScope scope_;
  std::int64_t c_m_;
};

// Modules both stacks have.
class MsaModules : public MsaModulesBase, public ::testing::WithParamInterface<Stack> {
 protected:
  MsaModules() : MsaModulesBase(GetParam()) {}
};
class EvoformerMsaModules : public MsaModulesBase {
 protected:
  EvoformerMsaModules() : MsaModulesBase(Stack::evoformer) {}
};
class ExtraMsaModules : public MsaModulesBase {
 protected:
  ExtraMsaModules() : MsaModulesBase(Stack::extra) {}
};

TEST_P(MsaModules, MsaRowAttentionWithPairBias) {
  const AttentionDims d = extra_ ? cfg_.extra_msa_row_attention : cfg_.msa_row_attention;
  const ParamScope s = scope_ / "msa_row_attention_with_pair_bias";
  const MsaRowAttentionWithPairBias module(s, c_m_, cfg_.c_z, d);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 1);
  std::vector<float> z = random_values(N * N * static_cast<std::size_t>(cfg_.c_z), 2);
  std::vector<float> mask = random_mask(S, N, 3);
  const Vec want =
      naive_row_attention(s, c_m_, cfg_.c_z, d, to_double(m), to_double(z), to_double(mask), S, N);
  const Tensor zv(z.data(), DType::f32, Shape{N, N, cfg_.c_z});
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaRowAttentionWithPairBias", m, Shape{S, N, c_m_}, want,
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, zv, mv, ctx); });
}

// Every pass over a spilled MSA representation stages it, even where the plan leaves the page
// cache room to hold it whole (SpillWindow::kAlwaysStaged): paged through the mapping instead, a
// pass faults each page, and under a cgroup limit does so again pass after pass. A staged pass
// leaves none of m's pages in the page cache; a paged one leaves them all.
TEST_P(MsaModules, EveryPassOverASpilledMsaIsStagedWhateverRoomThePlanLeavesToCacheIt) {
  const ScratchDir dir;
  if (spill_dir_in_memory(dir.path())) GTEST_SKIP() << "the page cache of tmpfs is its storage";
  FileTier tier(dir.path());
  tier.set_cache_bytes(std::size_t{1} << 40);
  const std::int64_t rows = 64, n = 32, cz = cfg_.c_z, chunk = 8;
  Arena spilled("activations", tier, f32_bytes({rows, n, c_m_}));
  const Tensor m = spilled.allocate(DType::f32, {rows, n, c_m_});
  const std::vector<float> m0 = random_values(static_cast<std::size_t>(m.numel()), 61);
  std::copy(m0.begin(), m0.end(), m.data_as<float>());
  spilled.evict(m.data(), m.nbytes());  // written through the mapping, then dropped
  ASSERT_LE(cached_pages(m.data(), m.nbytes()), 2u);
  std::vector<float> z = random_values(static_cast<std::size_t>(n * n * cz), 62);
  std::vector<float> mask = random_mask(rows, n, 63);
  const Tensor zv(z.data(), DType::f32, Shape{n, n, cz});
  const Tensor mv(mask.data(), DType::f32, Shape{rows, n});
  const auto run = [&](const std::string& what, std::size_t scratch_bytes,
                       const std::function<void(const RunContext&)>& forward) {
    Arena scratch = sized_arena(scratch_bytes);
    Arena apart("apart", dram_tier(), std::size_t{64} << 20);
    RunContext ctx;
    ctx.scratch = &scratch;
    ctx.activations = &apart;
    ctx.chunk = chunk;
    forward(ctx);
    EXPECT_LE(cached_pages(m.data(), m.nbytes()), 2u) << what << " paged m through the mapping";
  };

  const AttentionDims d = extra_ ? cfg_.extra_msa_row_attention : cfg_.msa_row_attention;
  const MsaRowAttentionWithPairBias row(scope_ / "msa_row_attention_with_pair_bias", c_m_, cz, d);
  run("the row attention", row.scratch_bytes(rows, n, chunk),
      [&](const RunContext& ctx) { row.forward(m, zv, mv, ctx); });
  const Transition transition(
      scope_ / "msa_transition", c_m_,
      extra_ ? cfg_.extra_msa_transition_factor : cfg_.msa_transition_factor);
  if (extra_) {
    const MsaColumnGlobalAttention column(scope_ / "msa_column_global_attention", c_m_,
                                          cfg_.extra_msa_global_attention);
    run("the global column attention", column.scratch_bytes(rows, n, chunk, &transition),
        [&](const RunContext& ctx) { column.forward(m, mv, ctx, &transition); });
  } else {
    const MsaColumnAttention column(scope_ / "msa_column_attention", c_m_,
                                    cfg_.msa_column_attention);
    run("the column attention", column.scratch_bytes(rows, n, chunk, &transition),
        [&](const RunContext& ctx) { column.forward(m, mv, ctx, &transition); });
  }
  const OuterProductMean opm(scope_ / "outer_product_mean", c_m_, cz,
                             extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm);
  run("the outer product mean", opm.scratch_bytes(rows, n, chunk, true),
      [&](const RunContext& ctx) { opm.forward(m, mv, zv, ctx); });
}

TEST_F(EvoformerMsaModules, MsaColumnAttention) {
  const ParamScope s = scope_ / "msa_column_attention";
  const MsaColumnAttention module(s, c_m_, cfg_.msa_column_attention);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 4);
  std::vector<float> mask = random_mask(S, N, 5);
  const Vec want = naive_column_attention(s, c_m_, cfg_.msa_column_attention, to_double(m),
                                          to_double(mask), S, N);
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaColumnAttention", m, Shape{S, N, c_m_}, want,
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx); });
}

TEST_F(ExtraMsaModules, MsaColumnGlobalAttention) {
  const ParamScope s = scope_ / "msa_column_global_attention";
  const AttentionDims d = cfg_.extra_msa_global_attention;
  const MsaColumnGlobalAttention module(s, c_m_, d);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 6);
  std::vector<float> mask = random_mask(S, N, 7);
  const Vec want = naive_global_attention(s, c_m_, d, to_double(m), to_double(mask), S, N);
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaColumnGlobalAttention", m, Shape{S, N, c_m_}, want,
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx); });

  // All-ones mask too (what the reference runs): the masked mean is a plain mean.
  std::vector<float> ones(S * N, 1.f);
  const Vec want_ones = naive_global_attention(s, c_m_, d, to_double(m), to_double(ones), S, N);
  const Tensor ov(ones.data(), DType::f32, Shape{S, N});
  check(
      "MsaColumnGlobalAttention (all ones)", m, Shape{S, N, c_m_}, want_ones,
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, ov, ctx); });
}

// The column update, then the transition of the updated MSA (Alg. 6 lines 2-3), as updates of m.
Vec column_then_transition(const Vec& m, const Vec& column, const ParamScope& transition,
                           std::int64_t c, std::int64_t factor) {
  Vec after = m;
  for (std::size_t i = 0; i < after.size(); ++i) after[i] += column[i];
  const Vec t = naive_transition(transition, c, factor, after, nullptr);
  Vec both = column;
  for (std::size_t i = 0; i < both.size(); ++i) both[i] += t[i];
  return both;
}

TEST_F(EvoformerMsaModules, MsaColumnAttentionRunsTheTransitionInItsPass) {
  const MsaColumnAttention module(scope_ / "msa_column_attention", c_m_, cfg_.msa_column_attention);
  const ParamScope ts = scope_ / "msa_transition";
  const Transition transition(ts, c_m_, cfg_.msa_transition_factor);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 14);
  std::vector<float> mask = random_mask(S, N, 15);
  const Vec column =
      naive_column_attention(scope_ / "msa_column_attention", c_m_, cfg_.msa_column_attention,
                             to_double(m), to_double(mask), S, N);
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaColumnAttention then MsaTransition", m, Shape{S, N, c_m_},
      column_then_transition(to_double(m), column, ts, c_m_, cfg_.msa_transition_factor),
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk, &transition); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx, &transition); });
}

TEST_F(ExtraMsaModules, MsaColumnGlobalAttentionRunsTheTransitionInItsUpdatePass) {
  const ParamScope s = scope_ / "msa_column_global_attention";
  const AttentionDims d = cfg_.extra_msa_global_attention;
  const MsaColumnGlobalAttention module(s, c_m_, d);
  const ParamScope ts = scope_ / "msa_transition";
  const Transition transition(ts, c_m_, cfg_.extra_msa_transition_factor);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 16);
  std::vector<float> mask = random_mask(S, N, 17);
  const Vec column = naive_global_attention(s, c_m_, d, to_double(m), to_double(mask), S, N);
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaColumnGlobalAttention then MsaTransition", m, Shape{S, N, c_m_},
      column_then_transition(to_double(m), column, ts, c_m_, cfg_.extra_msa_transition_factor),
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk, &transition); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx, &transition); });
}

TEST_P(MsaModules, MsaTransition) {
  const std::int64_t factor =
      extra_ ? cfg_.extra_msa_transition_factor : cfg_.msa_transition_factor;
  const ParamScope s = scope_ / "msa_transition";
  const Transition module(s, c_m_, factor);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 8);
  std::vector<float> mask = random_mask(S, N, 9);
  const Vec md = to_double(mask);
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  check(
      "MsaTransition (unmasked)", m, Shape{S, N, c_m_},
      naive_transition(s, c_m_, factor, to_double(m), nullptr),
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk, false); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, Tensor(), ctx); });
  check(
      "MsaTransition (masked)", m, Shape{S, N, c_m_},
      naive_transition(s, c_m_, factor, to_double(m), &md),
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk, true); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx); });
}

TEST_P(MsaModules, PairTransition) {
  const ParamScope s = scope_ / "pair_transition";
  const Transition module(s, cfg_.c_z, cfg_.pair_transition_factor);
  const std::vector<float> z = random_values(N * N * static_cast<std::size_t>(cfg_.c_z), 10);
  std::vector<float> mask = random_mask(N, N, 11);
  const Vec md = to_double(mask);
  const Tensor mv(mask.data(), DType::f32, Shape{N, N});
  check(
      "PairTransition (masked)", z, Shape{N, N, cfg_.c_z},
      naive_transition(s, cfg_.c_z, cfg_.pair_transition_factor, to_double(z), &md),
      [&](std::int64_t chunk) { return module.scratch_bytes(N, N, chunk, true); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, mv, ctx); });
}

// Outer product mean over `n_seq` random sequences against the naive double result, at every
// chunk of check().
void MsaModulesBase::check_outer_product_mean(std::size_t n_seq, std::uint32_t seed) {
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const ParamScope s = scope_ / "outer_product_mean";
  const OuterProductMean module(s, c_m_, cfg_.c_z, c_h);
  std::vector<float> m = random_values(n_seq * N * static_cast<std::size_t>(c_m_), seed);
  const std::vector<float> z = random_values(N * N * static_cast<std::size_t>(cfg_.c_z), seed + 1);
  std::vector<float> mask = random_mask(n_seq, N, seed + 2);
  const Vec want =
      naive_outer_product_mean(s, c_m_, cfg_.c_z, c_h, to_double(m), to_double(mask), n_seq, N);
  const std::int64_t rows = static_cast<std::int64_t>(n_seq);
  const Tensor mview(m.data(), DType::f32, Shape{rows, N, c_m_});
  const Tensor mv(mask.data(), DType::f32, Shape{rows, N});
  check(
      "OuterProductMean", z, Shape{N, N, cfg_.c_z}, want,
      [&](std::int64_t chunk) { return module.scratch_bytes(rows, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(mview, mv, x, ctx); });
}

TEST_P(MsaModules, OuterProductMean) {
  check_outer_product_mean(S, 12);
}

// More sequences than one accumulation step of the chunked sum (256 when the right projection
// is not kept: beyond 2·chunk·c_m sequences) and than a LayerNorm block (64): the steps add up to
// the naive double result and to the unchunked one.
TEST_P(MsaModules, OuterProductMeanOverSeveralSequenceBlocks) {
  check_outer_product_mean(300, 17);
}

// Built under bf16 compute (as in the trunk's stacks), the outer products run in bf16: the
// update differs from fp32 by bf16 rounding only, at every chunk (each within its planned
// scratch), and does not depend on the chunk. 600 rows: more than one bf16 accumulation step
// (512 sequences) where the right projection is not kept.
TEST_P(MsaModules, OuterProductMeanInBf16IsFp32WithinBf16Rounding) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const std::int64_t rows = 600;
  const std::vector<float> m = random_values(rows * N * static_cast<std::size_t>(c_m_), 21);
  const std::vector<float> z0 = random_values(N * N * static_cast<std::size_t>(cfg_.c_z), 22);
  const Tensor mview(const_cast<float*>(m.data()), DType::f32, Shape{rows, N, c_m_});
  // A padded MSA, and one without padding, whose chunked right projection stores bf16 directly.
  for (const bool padded : {true, false}) {
    SCOPED_TRACE(padded ? "padded MSA" : "MSA without padding");
    std::vector<float> mask = padded ? random_mask(rows, N, 23)
                                     : std::vector<float>(static_cast<std::size_t>(rows * N), 1.f);
    const Tensor mv(mask.data(), DType::f32, Shape{rows, N});
    const auto run = [&](const OuterProductMean& module, std::int64_t chunk) {
      Arena arena = sized_arena(module.scratch_bytes(rows, N, chunk));
      RunContext ctx;
      ctx.scratch = &arena;
      ctx.chunk = chunk;
      std::vector<float> z = z0;
      module.forward(mview, mv, Tensor(z.data(), DType::f32, Shape{N, N, cfg_.c_z}), ctx);
      EXPECT_EQ(arena.used(), 0u);
      return z;
    };
    const ParamScope s = scope_ / "outer_product_mean";
    const auto fp32 = run(OuterProductMean(s, c_m_, cfg_.c_z, c_h), 0);
    const OuterProductMean module(s.with_precision(DType::bf16), c_m_, cfg_.c_z, c_h);
    const auto base = run(module, 0);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < base.size(); ++i) {
      diff += std::pow(double{base[i]} - fp32[i], 2);
      norm += std::pow(double{fp32[i]} - z0[i], 2);
    }
    const double rel = std::sqrt(diff / norm);
    std::cout << "[ bf16     ] relative RMS of the update vs fp32: " << rel << "\n";
    EXPECT_GT(rel, 1e-4) << "no bf16 rounding seen";
    EXPECT_LT(rel, 2e-2) << "more than bf16 rounding";
    for (const std::int64_t chunk : {1, 3, 8}) {
      std::vector<float> got = run(module, chunk);
      const auto inv = matches_reference("bf16 chunk " + std::to_string(chunk),
                                         Tensor(got.data(), DType::f32, Shape{N, N, cfg_.c_z}),
                                         base, Shape{N, N, cfg_.c_z}, kChunkInvarianceTolerance);
      if (inv) std::cout << "[ chunking ] " << inv.message() << "\n";
      EXPECT_TRUE(inv);
    }
  }
}

// With a chunk the transients do not grow with the MSA depth (the extra MSA's 5,120 rows): they
// are O(chunk·n_res·c²).
TEST_P(MsaModules, OuterProductMeanScratchIsBoundedByTheChunk) {
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const OuterProductMean module(scope_ / "outer_product_mean", c_m_, cfg_.c_z, c_h);
  const std::size_t n = 200, chunk = 4, c = static_cast<std::size_t>(c_h);
  const std::size_t cm = static_cast<std::size_t>(c_m_), cz = static_cast<std::size_t>(cfg_.c_z);
  const std::size_t deep = module.scratch_bytes(5120, 200, 4);
  EXPECT_EQ(deep, module.scratch_bytes(1024, 200, 4));
  EXPECT_LT(deep, module.scratch_bytes(5120, 200, 0));
  // outer and its reorder, the output, a, b and their mask for at most max(256, 2·chunk·c_m)
  // sequences (the right projection of 2·chunk·c_m sequences is kept whole, deeper MSAs are
  // summed 256 at a time), LayerNorm rows of 64 sequences of the slab and of 4,096 MSA rows
  // (whole sequences, at least one) for the right projection.
  const std::size_t block = std::max<std::size_t>(256, 2 * chunk * cm);
  const std::size_t bound = sizeof(float) * (2 * chunk * n * c * c + chunk * n * (cz + 1) +
                                             block * (n * (c + 1) + chunk * c) + 64 * chunk * cm +
                                             std::max<std::size_t>(n, 4096) * cm) +
                            (1u << 20);
  EXPECT_LE(deep, bound);
}

// No MSA rows (cpufold's absent extra MSA): AF2 still adds output_b / (1e-3 + 0) to every
// pair, since the outer product over zero rows is zero and its norm is zero. The scratch
// arena is filled with garbage first, so a GEMM that leaves its output unwritten for an
// empty inner dimension shows up.
TEST_P(MsaModules, OuterProductMeanOverNoRowsAddsTheBiasOverEpsilon) {
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const ParamScope s = scope_ / "outer_product_mean";
  const OuterProductMean module(s, c_m_, cfg_.c_z, c_h);
  const Vec bias = param(s, "output_b", {cfg_.c_z});
  const std::int64_t n = N, cz = cfg_.c_z;
  for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{3}}) {
    Arena arena = sized_arena(module.scratch_bytes(0, n, chunk));
    {
      const Tensor all =
          arena.allocate(DType::f32, {static_cast<std::int64_t>(arena.capacity() / 4)});
      std::fill(all.data_as<float>(), all.data_as<float>() + all.numel(), 12345.f);
      arena.release_to(0);
    }
    RunContext ctx;
    ctx.scratch = &arena;
    ctx.chunk = chunk;
    std::vector<float> m(1), mask(1), z(static_cast<std::size_t>(n * n * cz), 0.f);
    module.forward(Tensor(m.data(), DType::f32, {0, n, c_m_}),
                   Tensor(mask.data(), DType::f32, {0, n}),
                   Tensor(z.data(), DType::f32, {n, n, cz}), ctx);
    std::vector<float> want(z.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      want[i] = static_cast<float>(bias[i % static_cast<std::size_t>(cz)] / 1e-3);
    EXPECT_TRUE(matches_reference("OuterProductMean over 0 rows, chunk " + std::to_string(chunk),
                                  Tensor(z.data(), DType::f32, {n, n, cz}), want, {n, n, cz},
                                  kRepresentationTolerance));
  }
}

// A mask given as a transposed (strided) view gives the same result as a contiguous one.
TEST_F(EvoformerMsaModules, MsaColumnAttentionStridedMask) {
  const ParamScope s = scope_ / "msa_column_attention";
  const MsaColumnAttention module(s, c_m_, cfg_.msa_column_attention);
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 15);
  std::vector<float> mask = random_mask(S, N, 16);
  std::vector<float> mask_t(S * N);
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t j = 0; j < N; ++j) mask_t[j * S + i] = mask[i * N + j];
  const Tensor strided = Tensor(mask_t.data(), DType::f32, Shape{N, S}).transpose(0, 1);
  const Vec want = naive_column_attention(s, c_m_, cfg_.msa_column_attention, to_double(m),
                                          to_double(mask), S, N);
  check(
      "MsaColumnAttention (strided mask)", m, Shape{S, N, c_m_}, want,
      [&](std::int64_t chunk) { return module.scratch_bytes(S, N, chunk); },
      [&](const Tensor& x, const RunContext& ctx) { module.forward(x, strided, ctx); });
}

// Each module's forward() in an arena of exactly its scratch_bytes(): an allocation its buffer
// lists do not cover throws BudgetError. In fp32 and under bf16 compute (bf16 normed copies and
// hidden layers, a bf16 stored MSA), with chunks that leave a remainder of rows and of columns.
class MsaModulesExactScratch : public MsaModulesBase,
                               public ::testing::WithParamInterface<std::tuple<Stack, DType>> {
 protected:
  MsaModulesExactScratch() : MsaModulesBase(std::get<0>(GetParam())) {}

  // `forward` on a copy of `state` (f32, or rounded to bf16 when `narrow`), in an arena of
  // exactly `bytes`, for every chunk of kChunks.
  void run_exact(const std::string& what, const std::vector<float>& state, const Shape& shape,
                 bool narrow, const std::function<std::size_t(std::int64_t)>& scratch_bytes,
                 const std::function<void(const Tensor&, const RunContext&)>& forward) const {
    for (const std::int64_t chunk : kChunks) {
      SCOPED_TRACE(what + " chunk " + std::to_string(chunk));
      Arena arena("exact", dram_tier(), std::max<std::size_t>(scratch_bytes(chunk), 64));
      RunContext ctx;
      ctx.scratch = &arena;
      ctx.chunk = chunk;
      std::vector<float> x = state;
      std::vector<bf16> x16(state.begin(), state.end());
      const Tensor t =
          narrow ? Tensor(x16.data(), DType::bf16, shape) : Tensor(x.data(), DType::f32, shape);
      EXPECT_NO_THROW(forward(t, ctx));
      EXPECT_EQ(arena.used(), 0u) << "scratch not released";
    }
  }

  // S = 7 rows and N = 9 columns: chunk 2 leaves a row and a column (2 columns per step) over,
  // chunk 3 a row.
  static constexpr std::int64_t kChunks[] = {0, 2, 3};
};

TEST_P(MsaModulesExactScratch, ForwardFitsItsScratchBytes) {
  const DType precision = std::get<1>(GetParam());
  if (precision == DType::bf16 && !bf16_support().available) {
    GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  }
  const ParamScope scope = scope_.with_precision(precision);
  const bool bf16 = precision == DType::bf16;
  const std::int64_t cz = cfg_.c_z;
  const std::vector<float> m = random_values(S * N * static_cast<std::size_t>(c_m_), 31);
  std::vector<float> z = random_values(N * N * static_cast<std::size_t>(cz), 32);
  std::vector<float> mask = random_mask(S, N, 33), pair_mask = random_mask(N, N, 34);
  const Tensor zv(z.data(), DType::f32, Shape{N, N, cz});
  const Tensor mv(mask.data(), DType::f32, Shape{S, N});
  const Tensor pv(pair_mask.data(), DType::f32, Shape{N, N});
  const Shape msa{S, N, c_m_};

  const MsaRowAttentionWithPairBias row(
      scope / "msa_row_attention_with_pair_bias", c_m_, cz,
      extra_ ? cfg_.extra_msa_row_attention : cfg_.msa_row_attention);
  const Transition transition(
      scope / "msa_transition", c_m_,
      extra_ ? cfg_.extra_msa_transition_factor : cfg_.msa_transition_factor);
  // A bf16 stored MSA (the extra-MSA stack's under bf16 compute) as well as an fp32 one.
  for (const bool narrow : bf16 ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
    const DType m_type = narrow ? DType::bf16 : DType::f32;
    run_exact(
        "MsaRowAttentionWithPairBias", m, msa, narrow,
        [&](std::int64_t chunk) { return row.scratch_bytes(S, N, chunk, m_type); },
        [&](const Tensor& x, const RunContext& ctx) { row.forward(x, zv, mv, ctx); });
    run_exact(
        "MsaTransition", m, msa, narrow,
        [&](std::int64_t chunk) { return transition.scratch_bytes(S, N, chunk, false, m_type); },
        [&](const Tensor& x, const RunContext& ctx) { transition.forward(x, Tensor(), ctx); });
  }
  run_exact(
      "MsaTransition (masked)", m, msa, false,
      [&](std::int64_t chunk) { return transition.scratch_bytes(S, N, chunk, true); },
      [&](const Tensor& x, const RunContext& ctx) { transition.forward(x, mv, ctx); });
  const Transition pair_transition(scope / "pair_transition", cz, cfg_.pair_transition_factor);
  run_exact(
      "PairTransition (masked)", z, Shape{N, N, cz}, false,
      [&](std::int64_t chunk) { return pair_transition.scratch_bytes(N, N, chunk, true); },
      [&](const Tensor& x, const RunContext& ctx) { pair_transition.forward(x, pv, ctx); });

  if (extra_) {
    const MsaColumnGlobalAttention column(scope / "msa_column_global_attention", c_m_,
                                          cfg_.extra_msa_global_attention);
    for (const bool narrow : bf16 ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      run_exact(
          "MsaColumnGlobalAttention", m, msa, narrow,
          [&](std::int64_t chunk) { return column.scratch_bytes(S, N, chunk); },
          [&](const Tensor& x, const RunContext& ctx) { column.forward(x, mv, ctx); });
    }
  } else {
    const MsaColumnAttention column(scope / "msa_column_attention", c_m_,
                                    cfg_.msa_column_attention);
    run_exact(
        "MsaColumnAttention", m, msa, false,
        [&](std::int64_t chunk) { return column.scratch_bytes(S, N, chunk); },
        [&](const Tensor& x, const RunContext& ctx) { column.forward(x, mv, ctx); });
  }

  // The outer product mean over a shallow MSA and one deeper than a sequence block.
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const OuterProductMean opm(scope / "outer_product_mean", c_m_, cz, c_h);
  for (const std::int64_t rows : {std::int64_t{S}, std::int64_t{600}}) {
    const std::vector<float> deep = random_values(rows * N * static_cast<std::size_t>(c_m_), 35);
    std::vector<float> deep_mask = random_mask(rows, N, 36);
    const Tensor dv(const_cast<float*>(deep.data()), DType::f32, Shape{rows, N, c_m_});
    const Tensor dm(deep_mask.data(), DType::f32, Shape{rows, N});
    run_exact(
        "OuterProductMean over " + std::to_string(rows) + " rows", z, Shape{N, N, cz}, false,
        [&](std::int64_t chunk) { return opm.scratch_bytes(rows, N, chunk); },
        [&](const Tensor& x, const RunContext& ctx) { opm.forward(dv, dm, x, ctx); });
  }
}

// With ctx.activations set (a spilled plan) a chunked outer product mean keeps its projections
// there: over an MSA too deep to keep the right projection in scratch, both of them in the tiles
// of its tile pairs (and it takes less scratch); over a shallow one, the left projection's tiles
// beside the right projection kept in scratch, so that no slab reads columns of m. forward()
// fits arenas of exactly scratch_bytes(apart) and apart_bytes() and changes no bit of the update,
// for a padded MSA and one without padding (bf16: the projection stored straight to bf16). At
// 300 residues (slabs of 8, or with the extra-MSA widths tiles of 43 and a last one of 42) the
// short last block's products are summed in another order unless both paths give oneDNN the
// same leading dimension.
TEST_P(MsaModulesExactScratch, OuterProductMeanKeepsItsProjectionsApartAndChangesNoBit) {
  const DType precision = std::get<1>(GetParam());
  if (precision == DType::bf16 && !bf16_support().available) {
    GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  }
  const std::int64_t cz = cfg_.c_z;
  const std::int64_t c_h = extra_ ? cfg_.extra_c_hidden_opm : cfg_.c_hidden_opm;
  const OuterProductMean opm(scope_.with_precision(precision) / "outer_product_mean", c_m_, cz,
                             c_h);
  struct Case {
    std::int64_t n_res, rows, chunk;
  };
  // 1,100 and 600 rows: deeper than 2·chunk·c_m (the right projection recomputed in DRAM); 512
  // and 11: not so deep.
  const Case cases[] = {{9, 1100, 2}, {9, 1100, 3},  {9, 11, 2},
                        {9, 11, 3},   {300, 512, 8}, {300, 600, 8}};
  for (const Case& k : cases) {
    const std::int64_t n = k.n_res, rows = k.rows, chunk = k.chunk;
    const std::vector<float> m = random_values(rows * n * static_cast<std::size_t>(c_m_), 41);
    const std::vector<float> z0 = random_values(n * n * static_cast<std::size_t>(cz), 42);
    const Tensor mv(const_cast<float*>(m.data()), DType::f32, Shape{rows, n, c_m_});
    for (const bool padded : {true, false}) {
      std::vector<float> mask = padded
                                    ? random_mask(rows, n, 43)
                                    : std::vector<float>(static_cast<std::size_t>(rows * n), 1.f);
      const Tensor mk(mask.data(), DType::f32, Shape{rows, n});
      SCOPED_TRACE(std::to_string(n) + " residues, " + std::to_string(rows) + " rows, " +
                   (padded ? "padded" : "unpadded") + ", chunk " + std::to_string(chunk));
      ASSERT_GT(opm.apart_bytes(rows, n, chunk), 0u) << "no projection would be kept apart";
      if (rows > 2 * chunk * c_m_ && n == 9) {
        EXPECT_LT(opm.scratch_bytes(rows, n, chunk, true), opm.scratch_bytes(rows, n, chunk));
      }
      const auto run = [&](bool apart) {
        Arena scratch("exact", dram_tier(),
                      std::max<std::size_t>(opm.scratch_bytes(rows, n, chunk, apart), 64));
        Arena activations("exact", dram_tier(),
                          std::max<std::size_t>(opm.apart_bytes(rows, n, chunk), 64));
        RunContext ctx;
        ctx.scratch = &scratch;
        ctx.activations = apart ? &activations : nullptr;
        ctx.chunk = chunk;
        std::vector<float> z = z0;
        EXPECT_NO_THROW(opm.forward(mv, mk, Tensor(z.data(), DType::f32, Shape{n, n, cz}), ctx));
        EXPECT_EQ(scratch.used(), 0u);
        EXPECT_EQ(activations.used(), 0u);
        if (apart) {
          EXPECT_EQ(activations.high_water(), opm.apart_bytes(rows, n, chunk));
        }
        return z;
      };
      const std::vector<float> in_scratch = run(false), apart = run(true);
      EXPECT_EQ(std::memcmp(in_scratch.data(), apart.data(), apart.size() * sizeof(float)), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, MsaModulesExactScratch,
                         ::testing::Combine(::testing::Values(Stack::evoformer, Stack::extra),
                                            ::testing::Values(DType::f32, DType::bf16)),
                         [](const ::testing::TestParamInfo<std::tuple<Stack, DType>>& info) {
                           return std::string(std::get<0>(info.param) == Stack::evoformer
                                                  ? "Evoformer"
                                                  : "ExtraMsaStack") +
                                  (std::get<1>(info.param) == DType::bf16 ? "Bf16" : "Fp32");
                         });

INSTANTIATE_TEST_SUITE_P(Tiny, MsaModules, ::testing::Values(Stack::evoformer, Stack::extra),
                         [](const ::testing::TestParamInfo<Stack>& info) {
                           return info.param == Stack::evoformer ? std::string("Evoformer")
                                                                 : std::string("ExtraMsaStack");
                         });

}  // namespace
}  // namespace cpufold::testing
