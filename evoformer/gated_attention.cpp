#include "evoformer/gated_attention.h"

#include <algorithm>

#include "ops/concat_linear.h"
#include "ops/layer_norm.h"
#include "ops/tensor_checks.h"

namespace cpufold {

GatedAttention::GatedAttention(const ParamScope& scope, std::int64_t c_in, AttentionDims dims,
                               std::int64_t c_out)
    : c_in_(c_in),
      c_out_(c_out),
      dims_(dims),
      qkv_(concat_linear({scope.get("query_w", {c_in, dims.n_head, dims.c_hidden}),
                          scope.get("key_w", {c_in, dims.n_head, dims.c_hidden}),
                          scope.get("value_w", {c_in, dims.n_head, dims.c_hidden})},
                         {}, scope.linear_source())),
      gating_(scope.get("gating_w", {c_in, dims.n_head, dims.c_hidden}),
              scope.get("gating_b", {dims.n_head, dims.c_hidden}), 1, scope.linear_source()),
      output_(scope.get("output_w", {dims.n_head, dims.c_hidden, c_out}),
              scope.get("output_b", {c_out}), 2, scope.linear_source()) {}

void GatedAttention::forward(const Tensor& x, const AttentionBias& bias, const Tensor& dst,
                             bool accumulate, Arena& scratch, GemmCache* gemm) const {
  if (x.rank() != 3 || !x.is_contiguous()) {
    throw InternalError("GatedAttention input must be contiguous [batch, seq, c_in], got " +
                        x.describe());
  }
  const std::int64_t n_batch = x.dim(0), n_seq = x.dim(1);
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden, hc = n_head * c;
  detail::check_activation(x, Shape{n_batch, n_seq, c_in_}, "GatedAttention input");
  if (x.dtype() != input_type()) {
    throw InternalError("GatedAttention input " + x.describe() + " must be " +
                        std::string(dtype_name(input_type())));
  }
  detail::check_activation(dst, Shape{n_batch, n_seq, c_out_}, "GatedAttention output");
  if (dst.dtype() == DType::bf16 && (!accumulate || qkv_.compute() != DType::bf16)) {
    throw InternalError("GatedAttention: a bf16 output " + dst.describe() +
                        " takes only a bf16 residual add");
  }
  if (n_batch == 0 || n_seq == 0) return;

  ArenaScope scope(scratch);
  const Buffers b = buffers(n_batch, n_seq).allocate(scratch);
  // q, k, v are strided views of one projection, stored in the precision the Linears compute
  // in, so bf16 attention reads them in place.
  qkv_.forward(x, b.qkv.reshape(Shape{n_batch, n_seq, 3 * hc}), scratch);
  multi_head_attention(b.qkv.select(2, 0), b.qkv.select(2, 1), b.qkv.select(2, 2), bias, b.o,
                       scratch, 0, gemm);

  // g = sigmoid(x·Wg + bg) ⊙ o, fused into the gating projection; stored in bf16 when the
  // output projection computes in bf16 (it would round g to bf16 itself, in a pass of its own).
  LinearEpilogue gate;
  gate.activation = Activation::sigmoid;
  gate.multiply = b.o.reshape(Shape{n_batch, n_seq, hc});
  gating_.forward(x, b.g, scratch, gate);

  LinearEpilogue out;
  out.accumulate = accumulate;
  output_.forward(b.g, dst, scratch, out);
}

DType GatedAttention::gate_type() const {
  return gating_.compute() == DType::bf16 && output_.compute() == DType::bf16 ? DType::bf16
                                                                              : DType::f32;
}

DType GatedAttention::input_type() const {
  return qkv_.compute() == DType::bf16 && gating_.compute() == DType::bf16 &&
                 c_in_ <= LayerNorm::kMaxBf16Channels
             ? DType::bf16
             : DType::f32;
}

BufferList<GatedAttention::Buffers> GatedAttention::buffers(std::int64_t n_batch,
                                                            std::int64_t n_seq) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  return {{&Buffers::qkv, qkv_.compute(), Shape{n_batch, n_seq, 3, n_head, c}},
          {&Buffers::o, DType::f32, Shape{n_batch, n_seq, n_head, c}},
          {&Buffers::g, gate_type(), Shape{n_batch, n_seq, n_head * c}}};
}

std::size_t GatedAttention::scratch_bytes(std::int64_t n_batch, std::int64_t n_seq, bool accumulate,
                                          DType dst) const {
  const std::int64_t rows = n_batch * n_seq;
  if (rows == 0) return 0;
  const DType qkv_type = qkv_.compute();
  const bool in16 = input_type() == DType::bf16, g16 = gate_type() == DType::bf16;
  const EpilogueKind qkv{.bf16_out = qkv_type == DType::bf16, .bf16_in = in16};
  const EpilogueKind gate{
      .activation = Activation::sigmoid, .gated = true, .bf16_out = g16, .bf16_in = in16};
  const EpilogueKind out{.accumulate = accumulate, .bf16_out = dst == DType::bf16, .bf16_in = g16};
  const std::size_t inner = std::max(
      {qkv_.scratch_bytes(rows, qkv), attention_scratch_bytes(n_seq, dims_.c_hidden, qkv_type),
       gating_.scratch_bytes(rows, gate), output_.scratch_bytes(rows, out)});
  return buffers(n_batch, n_seq).bytes() + inner;
}

}  // namespace cpufold
