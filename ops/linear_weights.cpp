// Linear's construction: the weights packed in oneDNN's layout, or found in the weight cache.
#include "ops/linear_impl.h"

#include <vector>

#include "ops/compute_precision.h"
#include "ops/dnnl_context.h"
#include "ops/weight_cache.h"

namespace cpufold {

using namespace linear_internal;

namespace linear_internal {

memory::data_type dnnl_type(DType t, const char* what) {
  switch (t) {
    case DType::f32:
      return memory::data_type::f32;
    case DType::bf16:
      return memory::data_type::bf16;
    default:
      throw WeightsError(std::string("Linear ") + what + " has dtype " +
                         std::string(dtype_name(t)) + "; expected f32 or bf16");
  }
}

}  // namespace linear_internal

Linear::Linear(const Tensor& w, const Tensor& bias, int in_axes, const LinearSource& source)
    : impl_(std::make_unique<Impl>()) {
  if (!w.is_contiguous() || in_axes < 1 || in_axes >= w.rank()) {
    throw WeightsError("Linear weight " + w.describe() + " must be contiguous with at least " +
                       std::to_string(in_axes) + " input and one output axis");
  }
  Impl& m = *impl_;
  m.set_compute(source.precision);
  m.force_staging = force_staging_for_tests;
  m.c_in = 1;
  for (int a = 0; a < in_axes; ++a) m.c_in *= w.dim(a);
  m.c_out = w.numel() / std::max<std::int64_t>(m.c_in, 1);
  if (m.c_in == 0 || m.c_out == 0)
    throw WeightsError("Linear weight " + w.describe() + " is empty");
  if (!bias.empty() && (bias.numel() != m.c_out || !bias.is_contiguous())) {
    throw WeightsError("Linear bias " + bias.describe() + " does not match weight " + w.describe() +
                       " (" + std::to_string(m.c_out) + " outputs)");
  }
  build_primitive("Linear weight " + w.describe(), [&] {
    m.weights =
        obtain_weight_memory(source.cache, m.packed_desc(), weight_identity(source.cache, w),
                             [&](memory& dst) { m.reorder_into(w, dst); });
    if (!bias.empty()) {
      m.bias =
          obtain_weight_memory(source.cache, m.bias_desc(), weight_identity(source.cache, bias),
                               [&](memory& dst) { m.reorder_into(bias, dst); });
    }
  });
}

Linear::Linear(const DeferredWeights& d) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.set_compute(d.source.precision);
  m.force_staging = force_staging_for_tests;
  m.c_in = d.c_in;
  m.c_out = d.c_out;
  if (m.c_in <= 0 || m.c_out <= 0) {
    throw WeightsError("Linear weight [" + std::to_string(d.c_in) + " x " +
                       std::to_string(d.c_out) + "] is empty");
  }
  // Made at most once, and only if a weight or bias is missing from the cache.
  std::vector<float> w, b;
  const auto make = [&] {
    if (!w.empty()) return;
    w.resize(static_cast<std::size_t>(m.c_in * m.c_out));
    b.resize(d.bias ? static_cast<std::size_t>(m.c_out) : 0);
    d.produce(w, b);
  };
  build_primitive(
      "Linear weight [" + std::to_string(m.c_in) + " x " + std::to_string(m.c_out) + "]", [&] {
        m.weights =
            obtain_weight_memory(d.source.cache, m.packed_desc(), d.identity, [&](memory& dst) {
              make();
              m.reorder_into(Tensor(w.data(), DType::f32, Shape{m.c_in, m.c_out}), dst);
            });
        if (!d.bias) return;
        m.bias = obtain_weight_memory(
            d.source.cache, m.bias_desc(), d.identity ^ 0x5bd1e995u, [&](memory& dst) {
              make();
              m.reorder_into(Tensor(b.data(), DType::f32, Shape{m.c_out}), dst);
            });
      });
}

void Linear::Impl::set_compute(DType t) {
  if (t != DType::f32 && t != DType::bf16) {
    throw InternalError("Linear: compute precision " + std::string(dtype_name(t)) +
                        "; expected f32 or bf16");
  }
  if (t == DType::bf16 && !bf16_support().available) {
    throw InputError("bf16 Linear: oneDNN has no bf16 matmul on this CPU (effective ISA " +
                     bf16_support().isa + "); use fp32");
  }
  compute = t;
}

memory::desc Linear::Impl::packed_desc() const {
  // Let oneDNN pick the weight layout for a typical row count; later primitives take it as is.
  const std::int64_t typical_rows = 256;
  const auto any = memory::desc(Dims{c_in, c_out}, src_type(), memory::format_tag::any);
  const auto probe = dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(row_desc(typical_rows, c_in, c_in, src_type()), any,
                         row_desc(typical_rows, c_out, c_out)),
      DnnlContext::instance().engine());
  return probe.weights_desc();
}

memory::desc Linear::Impl::bias_desc() const {
  return memory::desc(Dims{1, c_out}, memory::data_type::f32, memory::format_tag::ab);
}

void Linear::Impl::reorder_into(const Tensor& src, memory& dst) const {
  auto& ctx = DnnlContext::instance();
  const Dims dims = src.numel() == c_out ? Dims{1, c_out} : Dims{c_in, c_out};
  memory user(memory::desc(dims, dnnl_type(src.dtype(), src.numel() == c_out ? "bias" : "weight"),
                           memory::format_tag::ab),
              ctx.engine(), src.data());
  dnnl::reorder(user, dst).execute(ctx.stream(), user, dst);
  ctx.stream().wait();
}

}  // namespace cpufold
