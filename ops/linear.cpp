#include "ops/linear.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/compute_precision.h"
#include "ops/dnnl_context.h"
#include "ops/parallel_rows.h"
#include "ops/recently_used.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"
#include "ops/weight_cache.h"

namespace cpufold {
namespace {

using dnnl::memory;
using Dims = memory::dims;

// Everything a primitive depends on besides the weights.
struct PlanKey {
  std::int64_t rows, ld_x, ld_y, ld_mul;
  Activation activation;
  bool multiply, accumulate;
  bool bf16_out = false;  // dst in bf16
  bool operator==(const PlanKey&) const = default;
};

// One matmul primitive and how the epilogue is split between it and our row loop.
struct Plan {
  PlanKey key;
  dnnl::matmul matmul;
  bool with_bias = false;
  bool fused_activation = false;
  bool fused_multiply = false;
  // The matmul writes a contiguous [rows, c_out] scratch buffer that is then added to y,
  // because oneDNN only fuses `sum` when nothing else is (otherwise it falls back to ref).
  bool via_temp = false;
  // Residual add with bias: y += b first, then the gemm accumulates into y (beta = 1), which
  // needs neither a temp buffer nor oneDNN's [rows, c_out] sum scratchpad.
  bool prefill_bias = false;
  // No level of the ladder has a jit kernel for these strides (oneDNN offers some strided or
  // gated cases only in ref code on some ISAs): blocks of rows are copied to contiguous
  // staging buffers, multiplied by the plain contiguous plans below, and the whole epilogue
  // runs in our row loop. Used only through forward(); matmul/args stay empty.
  bool staged = false;
  std::int64_t stage_rows = 0;  // rows per block
  bool fused_sum = false;       // the residual add is oneDNN's `sum` post-op
  std::size_t dnnl_scratch_bytes = 0;
  std::size_t temp_bytes = 0;
  std::size_t src_bytes = 0;  // bf16 compute: the rows converted to bf16 (contiguous)
  // The primitive, its memory objects and argument map: made by the first forward() of this
  // plan, not by planning, which weighs row counts (chunk sizes) a run may never use and would
  // otherwise keep a primitive for each (≈ 30 MiB of heap over the full model's Linears). Then
  // forward() only swaps data handles, so a call allocates nothing.
  memory src, dst, mul, scratchpad;
  std::unordered_map<int, memory> args;

  std::size_t scratch_bytes() const {
    return align_up(dnnl_scratch_bytes) + align_up(temp_bytes) + align_up(src_bytes);
  }
};

// Rows per block of the staged path: bounds its buffers to kStageRows·(c_in + c_out) floats.
constexpr std::int64_t kStageRows = 256;

std::atomic<bool> force_staging_for_tests{false};

memory::desc row_desc(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                      memory::data_type type = memory::data_type::f32) {
  return memory::desc(Dims{rows, cols}, type, Dims{ld, 1});
}

// Rows [r0, r0 + n) of vx as contiguous bf16 rows at dst (round to nearest even).
void rows_to_bf16(const RowView& vx, std::int64_t r0, std::int64_t n, bf16* dst) {
  const std::int64_t cols = vx.cols;
  const auto& kernels = detail::row_kernels();
  detail::for_each_row(
      n, cols, [&](std::int64_t i) { kernels.to_bf16(vx.row(r0 + i), dst + i * cols, cols); });
}

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

}  // namespace

struct Linear::Impl {
  std::int64_t c_in = 0, c_out = 0;
  // f32: plain fp32 matmuls. bf16: weights packed in bf16, each call's input rows converted to
  // a contiguous bf16 scratch buffer; fp32 accumulation, bias, epilogue and output.
  DType compute = DType::f32;
  bool force_staging = false;  // detail::force_linear_staging at construction
  // `compute`'s type in the layout the matmul chose at construction; private, or viewing a shared
  // WeightCache file when its LinearSource named one.
  memory weights;
  memory bias;  // f32 [1, c_out], empty when there is none; private or shared like weights
  std::mutex mutex;
  // Most recently used first, at most kMaxPlans: a batch of many lengths would otherwise keep
  // a primitive (and its jit code) for every row count it ever saw. Shared so that a plan in
  // use survives its eviction by the plans it builds (the staged path's blocks).
  detail::RecentlyUsed<PlanKey, std::shared_ptr<Plan>> plans{kMaxPlans};
  // The staged path's scratch by row count, most recent first, at most kMaxPlans: the planner
  // asks for the same few row counts for every candidate plan it weighs.
  detail::RecentlyUsed<std::int64_t, std::size_t> staged_sizes{kMaxPlans};

  std::shared_ptr<Plan> plan(const PlanKey& key);
  std::size_t cached_staged_scratch_bytes(std::int64_t rows);
  std::shared_ptr<Plan> build_plan(const PlanKey& key);
  // Makes p's primitive and argument map if no forward() has yet (see Plan::matmul).
  void instantiate(Plan& p) const;
  // y = x·W + b for `rows` contiguous rows: what the staged path runs per block.
  PlanKey plain_key(std::int64_t rows) const {
    return {rows, c_in, c_out, 0, Activation::none, false, false};
  }
  bool bf16_compute() const { return compute == DType::bf16; }
  memory::data_type src_type() const {
    return bf16_compute() ? memory::data_type::bf16 : memory::data_type::f32;
  }
  std::size_t src_elem_bytes() const { return bf16_compute() ? sizeof(bf16) : sizeof(float); }
  // Checks `compute` and records it.
  void set_compute(DType t);
  // Scratch of the staged path for `rows` rows: both staging buffers of a block, plus the
  // larger oneDNN scratchpad of the block and tail plans (sized from descriptors only, so
  // planning builds no kernels it may never run).
  std::size_t staged_scratch_bytes(std::int64_t rows) const;
  void forward_staged(const Plan& p, const RowView& vx, const RowView& vy, const RowView& vm,
                      const LinearEpilogue& epilogue, Arena& scratch);
  // The layout oneDNN's matmul wants the weights in, and the bias's.
  memory::desc packed_desc() const;
  memory::desc bias_desc() const;
  // Reorders src (the weight [c_in, c_out] or the bias [c_out], f32 or bf16) into dst.
  void reorder_into(const Tensor& src, memory& dst) const;
  dnnl::matmul::primitive_desc try_desc(const PlanKey& key, bool with_bias, bool activation,
                                        bool multiply, bool sum) const;
  // Without a residual add fused as `sum`: as much of the epilogue as oneDNN runs in jit code
  // (activation and gate, activation, nothing), the rest left to our row loop; p's flags say
  // which. Its descriptor may still be a reference kernel (none was fast).
  dnnl::matmul::primitive_desc fusion_ladder(Plan& p, bool has_bias) const;
  // "Linear [rows x c_in] x [c_in x c_out]", for messages.
  std::string describe(const PlanKey& key) const;
};

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

std::size_t Linear::Impl::cached_staged_scratch_bytes(std::int64_t rows) {
  if (const std::size_t* hit = staged_sizes.find(rows)) return *hit;
  return staged_sizes.insert(
      rows, build_primitive("Linear staging", [&] { return staged_scratch_bytes(rows); }));
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
    throw InternalError("Linear [" + std::to_string(key.rows) + " x " + std::to_string(c_in) +
                        "]: oneDNN gave another matmul than the one planned");
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
  return std::max(direct, impl_->cached_staged_scratch_bytes(rows));
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
