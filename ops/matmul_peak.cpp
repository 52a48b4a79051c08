#include "ops/matmul_peak.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/dnnl_context.h"

namespace cpufold {

MatmulPeak measure_matmul_peak(std::int64_t size, int repeat, DType precision) {
  using dnnl::memory;
  DnnlContext& ctx = DnnlContext::instance();
  const bool bf16 = precision == DType::bf16;
  // bf16: bf16 inputs, f32 output (f32 accumulation), as the bf16 Linears run.
  const memory::desc in_md({size, size}, bf16 ? memory::data_type::bf16 : memory::data_type::f32,
                           memory::format_tag::ab);
  const memory::desc md({size, size}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd = build_primitive("the matmul peak benchmark", [&] {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(in_md, in_md, md), ctx.engine());
  });
  const dnnl::matmul prim =
      build_primitive("the matmul peak benchmark", [&] { return dnnl::matmul(pd); });
  const auto count = static_cast<std::size_t>(size * size);
  std::vector<float> a(count), b(count), c(count);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = u(rng);
    b[i] = u(rng);
  }
  // bf16 operands: the upper halves of the f32 values (truncation is fine for a timing).
  std::vector<std::uint16_t> a16, b16;
  if (bf16) {
    a16.resize(count);
    b16.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      a16[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(a[i]) >> 16);
      b16[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(b[i]) >> 16);
    }
  }
  memory ma(in_md, ctx.engine(), bf16 ? static_cast<void*>(a16.data()) : a.data()),
      mb(in_md, ctx.engine(), bf16 ? static_cast<void*>(b16.data()) : b.data()),
      mc(md, ctx.engine(), c.data());
  const auto run = [&] {
    prim.execute(ctx.stream(), {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    ctx.stream().wait();
  };
  run();  // warm-up: kernel generation and first touch
  double best = 0;
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (best == 0 || secs < best) best = secs;
  }
  const double flop =
      2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
  return {size, flop / best / 1e9, pd.impl_info_str()};
}

}  // namespace cpufold
