// Linear's staged path: strided views copied to contiguous blocks, multiplied by plain plans, the
// epilogue in our row loop.
#include "ops/linear_impl.h"

#include <algorithm>
#include <cstring>

#include "ops/dnnl_context.h"
#include "ops/parallel_rows.h"
#include "ops/row_kernels.h"

namespace cpufold {

using namespace linear_internal;

namespace linear_internal {

// Rows [r0, r0 + n) of vx as contiguous bf16 rows at dst (round to nearest even).
void rows_to_bf16(const RowView& vx, std::int64_t r0, std::int64_t n, bf16* dst) {
  const std::int64_t cols = vx.cols;
  const auto& kernels = detail::row_kernels();
  detail::for_each_row(
      n, cols, [&](std::int64_t i) { kernels.to_bf16(vx.row(r0 + i), dst + i * cols, cols); });
}

}  // namespace linear_internal

void Linear::Impl::forward_staged(const Plan& p, const RowView& vx, const RowView& vy,
                                  const RowView& vm, const LinearEpilogue& epilogue,
                                  Arena& scratch) {
  const std::int64_t block = p.stage_rows;
  void* xs = scratch.allocate(compute, Shape{block, c_in}).data();
  float* ys = scratch.allocate(DType::f32, Shape{block, c_out}).data_as<float>();
  const auto& k = detail::row_kernels();
  const auto act = epilogue.activation == Activation::relu      ? k.relu
                   : epilogue.activation == Activation::sigmoid ? k.sigmoid
                                                                : nullptr;
  const bool multiply = !epilogue.multiply.empty();
  const std::size_t in_bytes = static_cast<std::size_t>(c_in) * sizeof(float);
  const std::size_t out_bytes = static_cast<std::size_t>(c_out) * sizeof(float);
  auto& stream = DnnlContext::instance().stream();
  for (std::int64_t r0 = 0; r0 < vx.rows; r0 += block) {
    const std::int64_t nb = std::min(block, vx.rows - r0);
    const std::shared_ptr<Plan> held = plan(plain_key(nb));
    Plan& inner = *held;
    if (!inner.matmul) build_primitive("Linear staging", [&] { instantiate(inner); });
    if (bf16_compute()) {
      rows_to_bf16(vx, r0, nb, static_cast<bf16*>(xs));
    } else {
      detail::for_each_row(nb, c_in, [&](std::int64_t i) {
        std::memcpy(static_cast<float*>(xs) + i * c_in, vx.row(r0 + i), in_bytes);
      });
    }
    inner.src.set_data_handle(xs);
    inner.dst.set_data_handle(ys);
    ArenaScope pad_scope(scratch);
    if (inner.dnnl_scratch_bytes > 0) {
      const auto pad =
          scratch.allocate(DType::u8, Shape{static_cast<std::int64_t>(inner.dnnl_scratch_bytes)});
      inner.scratchpad.set_data_handle(pad.data());
    }
    inner.matmul.execute(stream, inner.args);
    stream.wait();
    detail::for_each_row(nb, c_out, [&](std::int64_t i) {
      float* t = ys + i * c_out;
      if (act) act(t, c_out);
      if (multiply) k.mul(t, vm.row(r0 + i), c_out);
      if (epilogue.accumulate) {
        k.add(vy.row(r0 + i), t, c_out);
      } else {
        std::memcpy(vy.row(r0 + i), t, out_bytes);
      }
    });
  }
}

}  // namespace cpufold
