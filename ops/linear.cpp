#include "ops/linear.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "ops/dnnl_context.h"
#include "ops/linear_impl.h"
#include "ops/parallel_rows.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {

namespace linear_internal {
std::atomic<bool> force_staging_for_tests{false};
}  // namespace linear_internal

using namespace linear_internal;

Linear::~Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;

std::int64_t Linear::c_in() const {
  return impl_->c_in;
}
std::int64_t Linear::c_out() const {
  return impl_->c_out;
}
DType Linear::compute() const {
  return impl_->compute;
}
bool Linear::has_bias() const {
  return impl_->bias.get(true) != nullptr;
}
std::size_t Linear::plan_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->plans.size();
}

std::size_t Linear::primitive_count() const {
  std::lock_guard lock(impl_->mutex);
  return static_cast<std::size_t>(
      std::count_if(impl_->plans.begin(), impl_->plans.end(),
                    [](const auto& entry) { return static_cast<bool>(entry.second->matmul); }));
}

std::size_t Linear::scratch_bytes(std::int64_t rows, const EpilogueKind& kind) const {
  if (rows == 0) return 0;
  const PlanKey key{
      rows,       c_in(),          c_out(),      kind.gated ? c_out() : 0, kind.activation,
      kind.gated, kind.accumulate, kind.bf16_out};
  std::lock_guard lock(impl_->mutex);
  // forward() may be handed strided views of these rows, which on some ISAs take the staged
  // path: plan for whichever of the two takes more.
  const std::shared_ptr<Plan> planned = impl_->plan(key);
  std::size_t direct = planned->scratch_bytes();
  // A bf16 input is read in place: no converted copy. bf16 inputs and outputs are contiguous
  // rows, never staged.
  if (kind.bf16_in) direct -= align_up(planned->src_bytes);
  if (kind.bf16_in || kind.bf16_out) return direct;
  return std::max(direct, impl_->staged_fallback_bytes(*planned));
}

namespace {

// One call's operands as row views, and what they are.
struct LinearCall {
  RowView vx, vy, vm;  // vm: the gate, when there is one
  bool bf16_in = false, bf16_out = false, multiply = false;
};

LinearCall check_call(const Linear::Impl& impl, const Tensor& x, const Tensor& y,
                      const LinearEpilogue& epilogue) {
  LinearCall call;
  const std::int64_t c_in = impl.c_in, c_out = impl.c_out;
  // A bf16 x (already rounded, e.g. a LayerNorm's bf16 output) is read in place: contiguous
  // rows only, and only by a bf16 Linear.
  call.bf16_in = x.dtype() == DType::bf16;
  if (call.bf16_in && (!impl.bf16_compute() || !x.is_contiguous() || x.numel() % c_in != 0)) {
    throw InternalError("Linear: a bf16 input " + x.describe() +
                        " needs bf16 compute and contiguous rows of " + std::to_string(c_in));
  }
  call.vx = call.bf16_in ? RowView{nullptr, x.numel() / c_in, c_in, c_in}
                         : row_view(x, "Linear input", c_in);
  call.bf16_out = y.dtype() == DType::bf16;
  const EpilogueKind kind = epilogue.kind();
  if (call.bf16_out && (!impl.bf16_compute() || !y.is_contiguous() ||
                        (kind.accumulate && (kind.activation != Activation::none || kind.gated)))) {
    throw InternalError("Linear: a bf16 output " + y.describe() +
                        " needs bf16 compute and contiguous rows; an activation (and gate) or a "
                        "residual add, not both");
  }
  // A bf16 y is contiguous rows of c_out: only its row count and base address are used.
  call.vy = call.bf16_out ? RowView{nullptr, y.numel() / c_out, c_out, c_out}
                          : row_view(y, "Linear output", c_out);
  if (call.vx.rows != call.vy.rows || (call.bf16_out && y.numel() % c_out != 0)) {
    throw InternalError("Linear [" + std::to_string(c_in) + " -> " + std::to_string(c_out) +
                        "] given " + x.describe() + " -> " + y.describe());
  }
  call.multiply = !epilogue.multiply.empty();
  if (call.multiply) {
    call.vm = row_view(epilogue.multiply, "Linear gate", c_out);
    if (call.vm.rows != call.vy.rows || call.vm.cols != call.vy.cols) {
      throw InternalError("Linear gate " + epilogue.multiply.describe() +
                          " does not match output " + y.describe());
    }
  }
  return call;
}

// The plan's memory objects pointed at this call's operands (x converted to bf16 rows when the
// Linear computes in bf16), the bias prefilled where the plan wants it, and the matmul run.
// Returns the temp rows the plan writes through (null when it writes y directly).
float* execute_plan(const Linear::Impl& impl, Plan& p, const LinearCall& call, const Tensor& x,
                    const Tensor& y, Arena& scratch) {
  const RowView& vx = call.vx;
  const RowView& vy = call.vy;
  float* temp = nullptr;
  if (p.via_temp) temp = scratch.allocate(DType::f32, Shape{vy.rows, impl.c_out}).data_as<float>();
  if (call.bf16_in) {
    p.src.set_data_handle(x.data());
  } else if (impl.bf16_compute()) {
    auto* xs = scratch.allocate(DType::bf16, Shape{vx.rows, impl.c_in}).data_as<bf16>();
    rows_to_bf16(vx, 0, vx.rows, xs);
    p.src.set_data_handle(xs);
  } else {
    p.src.set_data_handle(vx.data);
  }
  p.dst.set_data_handle(call.bf16_out ? y.data() : p.via_temp ? static_cast<void*>(temp) : vy.data);
  if (p.fused_multiply) p.mul.set_data_handle(call.vm.data);
  if (p.dnnl_scratch_bytes > 0) {
    const auto pad =
        scratch.allocate(DType::u8, Shape{static_cast<std::int64_t>(p.dnnl_scratch_bytes)});
    p.scratchpad.set_data_handle(pad.data());
  }
  const auto& k = detail::row_kernels();
  const std::int64_t n = impl.c_out;
  if (p.prefill_bias) {
    const auto* b = static_cast<const float*>(impl.bias.get_data_handle());
    detail::for_each_row(vy.rows, n, [&](std::int64_t i) { k.add(vy.row(i), b, n); });
  }
  auto& stream = DnnlContext::instance().stream();
  p.matmul.execute(stream, p.args);
  stream.wait();
  return temp;
}

// The part of the epilogue the plan did not fuse, one pass over each row while it is in cache.
void finish_epilogue(const Plan& p, const LinearCall& call, const LinearEpilogue& epilogue,
                     float* temp, std::int64_t n) {
  const bool act = epilogue.activation != Activation::none && !p.fused_activation;
  const bool mul = call.multiply && !p.fused_multiply;
  if (!act && !mul && !p.via_temp) return;
  const auto& k = detail::row_kernels();
  const auto act_kernel = epilogue.activation == Activation::relu ? k.relu : k.sigmoid;
  detail::for_each_row(call.vy.rows, n, [&](std::int64_t i) {
    float* t = p.via_temp ? temp + i * n : call.vy.row(i);
    if (act) act_kernel(t, n);
    if (mul) k.mul(t, call.vm.row(i), n);
    if (p.via_temp) k.add(call.vy.row(i), t, n);
  });
}

}  // namespace

void Linear::forward(const Tensor& x, const Tensor& y, Arena& scratch,
                     const LinearEpilogue& epilogue) const {
  const LinearCall call = check_call(*impl_, x, y, epilogue);
  if (call.vx.rows == 0) return;
  const PlanKey key{call.vx.rows,
                    impl_->bf16_compute() ? c_in() : call.vx.ld,  // bf16: x is converted first
                    call.vy.ld,
                    call.multiply ? call.vm.ld : 0,
                    epilogue.activation,
                    call.multiply,
                    epilogue.accumulate,
                    call.bf16_out};
  ArenaScope scope(scratch);
  std::lock_guard lock(impl_->mutex);
  const std::shared_ptr<Plan> held = impl_->plan(key);
  Plan& p = *held;
  if (p.staged) {
    if (call.bf16_out || call.bf16_in)
      throw InternalError("Linear: no direct oneDNN plan for a bf16 input or output");
    impl_->forward_staged(p, call.vx, call.vy, call.vm, epilogue, scratch);
    return;
  }
  if (!p.matmul) {
    build_primitive(
        "Linear [" + std::to_string(call.vx.rows) + " x " + std::to_string(c_in()) + "]",
        [&] { impl_->instantiate(p); });
  }
  float* temp = execute_plan(*impl_, p, call, x, y, scratch);
  finish_epilogue(p, call, epilogue, temp, c_out());
}

namespace detail {
void force_linear_staging(bool on) {
  force_staging_for_tests = on;
}
}  // namespace detail

}  // namespace cpufold
