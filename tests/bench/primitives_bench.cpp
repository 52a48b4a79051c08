// Times the evoformer primitives at AF2-like sizes; not a test (no assertions).
// Usage: primitives_bench [repeats]   (threads: OMP_NUM_THREADS)
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ops/attention.h"
#include "ops/compute_precision.h"
#include "ops/dnnl_context.h"
#include "ops/gemm.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/row_kernels.h"
#include "ops/softmax.h"

namespace cpufold {
namespace {

int g_repeats = 10;

struct Buffer {
  std::vector<float> data;
  Tensor view;
  explicit Buffer(const Shape& shape)
      : data(static_cast<std::size_t>(shape.numel())), view(data.data(), DType::f32, shape) {
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.f, 0.5f);
    for (float& x : data) x = dist(rng);
  }
};

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// Best of g_repeats runs after one warm-up: wall and process CPU milliseconds. CPU time is
// the fairer number on a shared machine (it excludes time other processes held the cores,
// but includes OpenMP spin-waiting).
struct Timing {
  double wall_ms, cpu_ms;
};

template <typename F>
Timing best_ms(F&& f) {
  f();
  Timing best{1e30, 1e30};
  for (int i = 0; i < g_repeats; ++i) {
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best.wall_ms = std::min(best.wall_ms, wall);
    best.cpu_ms = std::min(best.cpu_ms, process_cpu_ms() - c0);
  }
  return best;
}

void report(const char* what, Timing t, double flops) {
  std::printf("%-44s wall %9.3f ms  cpu %9.3f ms", what, t.wall_ms, t.cpu_ms);
  if (flops > 0) std::printf("  %6.1f GFLOP/s (wall)", flops / t.wall_ms / 1e6);
  std::printf("\n");
}

void bench_linear(Arena& arena) {
  const std::int64_t rows = 16384, c_in = 128, c_out = 512;
  Buffer w(Shape{c_in, c_out}), b(Shape{c_out}), x(Shape{rows, c_in}), y(Shape{rows, c_out}),
      g(Shape{rows, c_out});
  const Linear plain(w.view, Tensor()), biased(w.view, b.view);
  const double flops = 2.0 * rows * c_in * c_out;
  report("Linear 16384x128x512", best_ms([&] { plain.forward(x.view, y.view, arena); }), flops);
  report("Linear +bias", best_ms([&] { biased.forward(x.view, y.view, arena); }), flops);
  report("Linear +bias +relu", best_ms([&] {
           biased.forward(x.view, y.view, arena, {Activation::relu, Tensor(), false});
         }),
         flops);
  report("Linear +bias +sigmoid *gate", best_ms([&] {
           biased.forward(x.view, y.view, arena, {Activation::sigmoid, g.view});
         }),
         flops);
  report("Linear accumulate (no bias)", best_ms([&] {
           plain.forward(x.view, y.view, arena, {Activation::none, Tensor(), true});
         }),
         flops);
  report("Linear +bias accumulate", best_ms([&] {
           biased.forward(x.view, y.view, arena, {Activation::none, Tensor(), true});
         }),
         flops);
  report("Linear +bias +sigmoid *gate accumulate", best_ms([&] {
           biased.forward(x.view, y.view, arena, {Activation::sigmoid, g.view, true});
         }),
         flops);
  if (!bf16_support().available) return;
  const Linear bf16_biased(w.view, b.view, 1, DType::bf16);
  report("Linear bf16 +bias (x converted per call)",
         best_ms([&] { bf16_biased.forward(x.view, y.view, arena); }), flops);
  report("Linear bf16 +bias +sigmoid *gate accumulate", best_ms([&] {
           bf16_biased.forward(x.view, y.view, arena, {Activation::sigmoid, g.view, true});
         }),
         flops);
}

// q, k and v as strided views of one [batch, n, 3, head, c] projection, as GatedAttention
// passes them (bf16: the projection stored in bf16, as with bf16 compute).
void bench_attention(Arena& arena, std::int64_t n_batch, std::int64_t n, std::int64_t chunk,
                     DType type = DType::f32, std::int64_t c = 32) {
  const std::int64_t n_head = 8;
  const Shape qkv_shape{n_batch, n, 3, n_head, c};
  Buffer qkv(qkv_shape), o(Shape{n_batch, n, n_head, c}), pair(Shape{n_head, n, n}),
      mask(Shape{n_batch, n});
  std::vector<bf16> qkv16;
  for (float x : qkv.data) qkv16.emplace_back(x);
  const Tensor in = type == DType::bf16 ? Tensor(qkv16.data(), DType::bf16, qkv_shape) : qkv.view;
  const double flops = 4.0 * n_batch * n_head * n * n * c;
  char what[112];
  std::snprintf(what, sizeof what, "attention B%ld Q=K=%ld H8 D%ld chunk %ld %s",
                static_cast<long>(n_batch), static_cast<long>(n), static_cast<long>(c),
                static_cast<long>(chunk), std::string(dtype_name(type)).c_str());
  GemmCache gemm;  // kept over the timed calls, as a model run keeps it
  report(what, best_ms([&] {
           multi_head_attention(in.select(2, 0), in.select(2, 1), in.select(2, 2),
                                {pair.view, mask.view}, o.view, arena, chunk, &gemm);
         }),
         flops);
}

// One attention tile's products per thread, through detail::gemm_bf16 and detail::sgemm.
void bench_tile_products() {
  const std::int64_t m = 128, n = 256, k = 32, calls = 512;
  const int threads = omp_get_max_threads();
  std::vector<float> a(threads * m * k, 0.5f), b(threads * n * k, 0.25f), c(threads * m * n);
  std::vector<bf16> ab(a.size(), bf16(0.5f)), bb(b.size(), bf16(0.25f));
  const double flops = 2.0 * m * n * k * calls * threads;
  GemmCache gemm(threads);
  for (const bool use_bf16 : {false, true}) {
    if (use_bf16 && !bf16_support().available) continue;
    report(use_bf16 ? "tile product M128 N256 K32 (B transposed), gemm_bf16 per thread"
                    : "tile product M128 N256 K32 (B transposed), sgemm per thread",
           best_ms([&] {
#pragma omp parallel for schedule(static)
             for (int t = 0; t < threads; ++t) {
               for (std::int64_t r = 0; r < calls; ++r) {
                 const bool ok =
                     use_bf16
                         ? detail::gemm_bf16(gemm, false, true, m, n, k, 1.f, ab.data() + t * m * k,
                                             k, bb.data() + t * n * k, k, 0.f, c.data() + t * m * n,
                                             n)
                         : detail::sgemm(false, true, m, n, k, 1.f, a.data() + t * m * k, k,
                                         b.data() + t * n * k, k, 0.f, c.data() + t * m * n, n);
                 if (!ok) std::abort();
               }
             }
           }),
           flops);
  }
}

// oneDNN's layer_normalization primitive on the same data, to justify the row-kernel choice.
Timing dnnl_layer_norm_ms(const Tensor& x, const Tensor& y, const std::vector<float>& scale_shift) {
  auto& ctx = DnnlContext::instance();
  using dnnl::memory;
  const memory::desc md(memory::dims{x.dim(0), x.dim(1)}, memory::data_type::f32,
                        memory::format_tag::ab);
  const dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                              dnnl::normalization_flags::use_scale_shift),
      ctx.engine());
  std::printf("  (oneDNN layer norm implementation: %s)\n", pd.impl_info_str());
  dnnl::layer_normalization_forward prim(pd);
  memory src(md, ctx.engine(), x.data()), dst(md, ctx.engine(), y.data());
  memory ss(pd.weights_desc(), ctx.engine(), const_cast<float*>(scale_shift.data()));
  return best_ms([&] {
    prim.execute(ctx.stream(),
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE_SHIFT, ss}});
    ctx.stream().wait();
  });
}

void bench_layer_norm() {
  for (std::int64_t c : {64, 128, 256, 384}) {
    const std::int64_t rows = 262144 / c * 16;  // 16 MiB of input
    Buffer x(Shape{rows, c}), y(Shape{rows, c}), scale(Shape{c}), offset(Shape{c});
    const LayerNorm ln(scale.view, offset.view);
    char what[96];
    std::snprintf(what, sizeof what, "LayerNorm [%ld, %ld] row kernel", static_cast<long>(rows),
                  static_cast<long>(c));
    report(what, best_ms([&] { ln.forward(x.view, y.view); }), 0);
    std::vector<float> scale_shift(scale.data);
    scale_shift.insert(scale_shift.end(), offset.data.begin(), offset.data.end());
    std::snprintf(what, sizeof what, "LayerNorm [%ld, %ld] oneDNN", static_cast<long>(rows),
                  static_cast<long>(c));
    report(what, dnnl_layer_norm_ms(x.view, y.view, scale_shift), 0);
  }
}

void bench_softmax() {
  Buffer x(Shape{8 * 128 * 128, 128});
  report("softmax [131072, 128]", best_ms([&] { softmax_inplace(x.view); }), 0);
  // The attention tiles' numerators over one 64x512 tile (column attention at 512 rows), with a
  // mask bias: fp32 weights, and bf16 weights (their own exp and rounding).
  const std::int64_t rows = 64, n = 512;
  Buffer logits(Shape{rows, n}), mask(Shape{n});
  std::vector<float> work(logits.data.size());
  std::vector<bf16> weights(logits.data.size());
  const auto& kernels = detail::row_kernels();
  const auto per_element = [&](bool bf16_weights) {
    constexpr int kTiles = 200;
    const Timing t = best_ms([&] {
      for (int tile = 0; tile < kTiles; ++tile) {
        std::copy(logits.data.begin(), logits.data.end(), work.begin());
        for (std::int64_t r = 0; r < rows; ++r) {
          float* row = work.data() + r * n;
          if (bf16_weights) {
            kernels.softmax_numerator_bf16(row, nullptr, mask.data.data(), n,
                                           weights.data() + r * n);
          } else {
            kernels.softmax_numerator(row, nullptr, mask.data.data(), n);
          }
        }
      }
    });
    return t.wall_ms * 1e6 / (kTiles * rows * n);
  };
  const double f32 = per_element(false), b16 = per_element(true);
  std::printf(
      "softmax numerator, %s table: fp32 weights %.3f ns/logit, bf16 weights %.3f "
      "ns/logit (each with a copy of the tile)\n",
      kernels.name, f32, b16);
}

}  // namespace
}  // namespace cpufold

int main(int argc, char** argv) {
  using namespace cpufold;
  if (argc > 1) g_repeats = std::max(1, std::atoi(argv[1]));
  std::printf("threads %d, best of %d runs\n", omp_get_max_threads(), g_repeats);
  Arena arena("bench", dram_tier(), std::size_t{512} << 20);
  bench_linear(arena);
  bench_attention(arena, 128, 128, 0);
  bench_attention(arena, 128, 128, 8);
  bench_attention(arena, 4, 512, 1);
  // An Evoformer block at N=256 with 512 MSA rows: row attention (a slice of the rows) and
  // column attention (a slice of the columns).
  for (const DType precision : {DType::f32, DType::bf16}) {
    if (precision == DType::bf16 && !bf16_support().available) continue;
    bench_attention(arena, 64, 256, 0, precision);
    bench_attention(arena, 32, 512, 0, precision);
  }
  // The extra-MSA stack's row attention: 8 channels per head (bf16 with AVX-512: the small-head
  // kernel; CPUFOLD_ROW_KERNELS=avx2 gives the GEMM tiles for comparison).
  for (const DType precision : {DType::f32, DType::bf16}) {
    if (precision == DType::bf16 && !bf16_support().available) continue;
    bench_attention(arena, 64, 256, 0, precision, 8);
  }
  bench_tile_products();
  bench_layer_norm();
  bench_softmax();
  return 0;
}
