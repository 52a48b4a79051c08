// Linear's plans: the fusion ladder per row shape, the plan cache, primitive instantiation.
#include "ops/linear_impl.h"

#include <algorithm>

#include "ops/dnnl_context.h"

namespace cpufold {

using namespace linear_internal;

dnnl::matmul::primitive_desc Linear::Impl::try_desc(const PlanKey& key, bool with_bias,
                                                    bool activation, bool multiply,
                                                    bool sum) const {
  const auto& engine = DnnlContext::instance().engine();
  const std::int64_t ld_dst = key.accumulate && !sum ? c_out : key.ld_y;
  dnnl::post_ops ops;
  if (activation) {
    const auto alg = key.activation == Activation::relu ? dnnl::algorithm::eltwise_relu
                                                        : dnnl::algorithm::eltwise_logistic;
    ops.append_eltwise(1.f, alg, 0.f, 0.f);
  }
  if (multiply)
    ops.append_binary(dnnl::algorithm::binary_mul, row_desc(key.rows, c_out, key.ld_mul));
  if (sum) ops.append_sum(1.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // A bf16 source is always the contiguous converted copy, whatever x's stride.
  const auto src = row_desc(key.rows, c_in, bf16_compute() ? c_in : key.ld_x, src_type());
  const auto dst = row_desc(key.rows, c_out, ld_dst,
                            key.bf16_out ? memory::data_type::bf16 : memory::data_type::f32);
  const auto desc = with_bias ? dnnl::matmul::desc(src, weights.get_desc(), bias.get_desc(), dst)
                              : dnnl::matmul::desc(src, weights.get_desc(), dst);
  return dnnl::matmul::primitive_desc(desc, attr, engine, /*allow_empty=*/true);
}

std::shared_ptr<Plan> Linear::Impl::plan(const PlanKey& key) {
  if (const std::shared_ptr<Plan>* hit = plans.find(key)) return *hit;
  return build_primitive(describe(key), [&] { return plans.insert(key, build_plan(key)); });
}

std::size_t Linear::Impl::staged_fallback_bytes(Plan& p) const {
  if (!p.staged_fallback_bytes) {
    p.staged_fallback_bytes =
        build_primitive("Linear staging", [&] { return staged_scratch_bytes(p.key.rows); });
  }
  return *p.staged_fallback_bytes;
}

std::shared_ptr<Plan> Linear::Impl::build_plan(const PlanKey& key) {
  auto p = std::make_shared<Plan>();
  p->key = key;
  const bool act = key.activation != Activation::none;
  const bool has_bias = bias.get(true) != nullptr;
  dnnl::matmul::primitive_desc pd;
  if (key.accumulate && !act && !key.multiply) {
    // A bf16 y takes the bias inside the matmul: prefilling it would round y twice.
    pd = try_desc(key, key.bf16_out && has_bias, false, false, /*sum=*/true);
    p->prefill_bias = has_bias && !key.bf16_out;
    p->fused_sum = true;
  }
  if (key.bf16_out && key.accumulate && (!pd || is_reference_impl(pd))) {
    throw InternalError("no fast oneDNN matmul with a bf16 output for " + describe(key));
  }
  if (!pd || is_reference_impl(pd)) pd = fusion_ladder(*p, has_bias);
  if (key.bf16_out && (act || key.multiply) &&
      (!pd || is_reference_impl(pd) || p->fused_activation != act ||
       p->fused_multiply != key.multiply)) {
    throw InternalError(
        "no fast oneDNN matmul with a fused activation (and gate) and a bf16 output for " +
        describe(key));
  }
  const bool strided = (key.ld_x != c_in && !bf16_compute()) || key.ld_y != c_out ||
                       (key.multiply && key.ld_mul != c_out);
  // A residual add that could not fuse `sum` for these strides (bf16's brgemm has no strided
  // dst) would need a [rows, c_out] temp that scratch_bytes() does not plan for contiguous
  // rows: staging bounds it instead.
  const bool unplanned_temp = p->via_temp && !act && !key.multiply;
  if (strided && (!pd || is_reference_impl(pd) || force_staging || unplanned_temp)) {
    p->staged = true;
    p->stage_rows = std::min(key.rows, kStageRows);
    p->dnnl_scratch_bytes = staged_scratch_bytes(key.rows);
    plan(plain_key(p->stage_rows));
    if (key.rows % p->stage_rows != 0) plan(plain_key(key.rows % p->stage_rows));
    return p;
  }
  if (!pd || is_reference_impl(pd)) {
    throw InternalError("no fast oneDNN matmul for " + describe(key));
  }
  p->with_bias = has_bias && !p->prefill_bias;
  p->dnnl_scratch_bytes = pd.scratchpad_desc().get_size();
  p->temp_bytes = p->via_temp ? static_cast<std::size_t>(key.rows * c_out) * sizeof(float) : 0;
  p->src_bytes = bf16_compute() ? static_cast<std::size_t>(key.rows * c_in) * sizeof(bf16) : 0;
  return p;
}

dnnl::matmul::primitive_desc Linear::Impl::fusion_ladder(Plan& p, bool has_bias) const {
  const PlanKey& key = p.key;
  const bool act = key.activation != Activation::none;
  p.prefill_bias = false;
  p.fused_sum = false;
  p.via_temp = key.accumulate;
  dnnl::matmul::primitive_desc pd;
  for (int level = 2; level >= 0; --level) {
    p.fused_activation = act && level >= 1;
    p.fused_multiply = key.multiply && level >= 2;
    pd = try_desc(key, has_bias, p.fused_activation, p.fused_multiply, false);
    if (pd && !is_reference_impl(pd)) break;
  }
  return pd;
}

std::string Linear::Impl::describe(const PlanKey& key) const {
  return "Linear [" + std::to_string(key.rows) + " x " + std::to_string(c_in) + "] x [" +
         std::to_string(c_in) + " x " + std::to_string(c_out) + "]";
}

void Linear::Impl::instantiate(Plan& p) const {
  if (p.matmul) return;
  const PlanKey& key = p.key;
  // The same descriptor build_plan() accepted and sized the scratch from.
  const auto pd = try_desc(key, p.with_bias, p.fused_activation, p.fused_multiply, p.fused_sum);
  if (!pd || pd.scratchpad_desc().get_size() != p.dnnl_scratch_bytes) {
    throw InternalError(describe(key) + ": oneDNN gave another matmul than the one planned");
  }
  const auto& engine = DnnlContext::instance().engine();
  p.src = memory(pd.src_desc(), engine, DNNL_MEMORY_NONE);
  p.dst = memory(pd.dst_desc(), engine, DNNL_MEMORY_NONE);
  p.args = {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, p.dst}};
  if (p.with_bias) p.args.emplace(DNNL_ARG_BIAS, bias);
  if (p.fused_multiply) {
    p.mul = memory(row_desc(key.rows, c_out, key.ld_mul), engine, DNNL_MEMORY_NONE);
    const int index = p.fused_activation ? 1 : 0;  // position of binary_mul in the chain
    p.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, p.mul);
  }
  if (p.dnnl_scratch_bytes > 0) {
    p.scratchpad = memory(pd.scratchpad_desc(), engine, DNNL_MEMORY_NONE);
    p.args.emplace(DNNL_ARG_SCRATCHPAD, p.scratchpad);
  }
  p.matmul = dnnl::matmul(pd);  // last: it marks the plan instantiated
}

std::size_t Linear::Impl::staged_scratch_bytes(std::int64_t rows) const {
  const std::int64_t block = std::min(rows, kStageRows);
  const bool has_bias = bias.get(true) != nullptr;
  std::size_t pad = 0;
  for (std::int64_t r : {block, rows % block}) {
    if (r == 0) continue;
    const auto pd = try_desc(plain_key(r), has_bias, false, false, false);
    if (!pd || is_reference_impl(pd)) {
      throw InternalError("no fast oneDNN matmul for contiguous Linear [" + std::to_string(r) +
                          " x " + std::to_string(c_in) + "] x [" + std::to_string(c_in) + " x " +
                          std::to_string(c_out) + "]");
    }
    pad = std::max(pad, align_up(pd.scratchpad_desc().get_size()));
  }
  return align_up(static_cast<std::size_t>(block * c_in) * src_elem_bytes()) +
         f32_bytes(block * c_out) + pad;
}

}  // namespace cpufold
