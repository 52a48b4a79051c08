#include "evoformer/template_pointwise_attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "evoformer/embedder_support.h"
#include "ops/concat_linear.h"
#include "ops/parallel_rows.h"
#include "ops/row_view.h"

namespace cpufold {

TemplatePointwiseAttention::TemplatePointwiseAttention(const ParamScope& scope, std::int64_t c_z,
                                                       std::int64_t c_t, const AttentionDims& dims,
                                                       float inf)
    : c_z_(c_z),
      c_t_(c_t),
      n_head_(dims.n_head),
      c_hidden_(dims.c_hidden),
      inf_(inf),
      query_(Linear(scope.get("query_w", {c_z, dims.n_head, dims.c_hidden}), Tensor(), 1,
                    scope.linear_source())),
      kv_(concat_linear({scope.get("key_w", {c_t, dims.n_head, dims.c_hidden}),
                         scope.get("value_w", {c_t, dims.n_head, dims.c_hidden})},
                        {}, scope.linear_source())),
      output_(Linear(scope.get("output_w", {dims.n_head, dims.c_hidden, c_z}),
                     scope.get("output_b", {c_z}), /*in_axes=*/2, scope.linear_source())) {}

namespace {

std::int64_t block_rows(std::int64_t chunk, std::int64_t n_res) {
  return chunk > 0 ? std::min(chunk, n_res) : n_res;
}

// The sizes of one pair's attention over its templates.
struct TemplateHeads {
  std::int64_t n_head, c_hidden, n_templ;
  std::int64_t kv_template_stride;  // floats from one template's keys and values to the next's
  float scale;                      // 1 / sqrt(c_hidden)
  const float* bias;                // [n_templ] mask bias
};

// Alg. 17 lines 3-5 for one pair (i, j), every head: softmax over the templates of the scaled
// q·k plus the mask bias (into p [n_head, n_templ]), then the weighted values (into o
// [n_head, c_hidden]). `kv` holds each template's keys then values, [2, n_head, c_hidden].
void attend_over_templates(const TemplateHeads& d, const float* q, const float* kv, float* p_all,
                           float* o) {
  const std::int64_t C = d.c_hidden, T = d.n_templ, hc = d.n_head * C;
  for (std::int64_t h = 0; h < d.n_head; ++h) {
    const float* qh = q + h * C;
    float* p = p_all + h * T;
    float max_logit = -INFINITY;
    for (std::int64_t k = 0; k < T; ++k) {
      const float* kh = kv + k * d.kv_template_stride + h * C;
      float dot = 0.f;
      for (std::int64_t c = 0; c < C; ++c) dot += (qh[c] * d.scale) * kh[c];
      p[k] = dot + d.bias[k];
      max_logit = std::max(max_logit, p[k]);
    }
    float sum = 0.f;
    for (std::int64_t k = 0; k < T; ++k) {
      p[k] = std::exp(p[k] - max_logit);
      sum += p[k];
    }
    for (std::int64_t k = 0; k < T; ++k) p[k] /= sum;
    float* oh = o + h * C;
    for (std::int64_t c = 0; c < C; ++c) oh[c] = 0.f;
    for (std::int64_t k = 0; k < T; ++k) {
      const float* vh = kv + k * d.kv_template_stride + hc + h * C;
      for (std::int64_t c = 0; c < C; ++c) oh[c] += p[k] * vh[c];
    }
  }
}

void fill_zero(const Tensor& dst) {
  const RowView v = row_view(dst, "TemplatePointwiseAttention output");
  for (std::int64_t r = 0; r < v.rows; ++r) std::fill(v.row(r), v.row(r) + v.cols, 0.f);
}

}  // namespace

BufferList<TemplatePointwiseAttention::Buffers> TemplatePointwiseAttention::buffers(
    std::int64_t n_templ, std::int64_t rows) const {
  const std::int64_t hc = n_head_ * c_hidden_;
  return {{&Buffers::bias, DType::f32, Shape{n_templ}},
          {&Buffers::q, DType::f32, Shape{rows, hc}},
          {&Buffers::kv, DType::f32, Shape{n_templ, rows, 2 * hc}},
          {&Buffers::o, DType::f32, Shape{rows, hc}},
          {&Buffers::p, DType::f32, Shape{rows, n_head_, n_templ}}};
}

std::size_t TemplatePointwiseAttention::scratch_bytes(std::int64_t n_templ, std::int64_t n_res,
                                                      std::int64_t chunk, bool accumulate) const {
  if (n_templ == 0) return 0;  // a zero update, no buffers
  const std::int64_t rows = block_rows(chunk, n_res) * n_res;
  std::size_t linear = std::max(query_.scratch_bytes(rows), kv_.scratch_bytes(rows));
  linear = std::max(linear, output_.scratch_bytes(rows, {.accumulate = accumulate}));
  return buffers(n_templ, rows).bytes() + linear;
}

void TemplatePointwiseAttention::forward(const Tensor& t, const Tensor& z,
                                         const Tensor& template_mask, const Tensor& dst,
                                         bool accumulate, const RunContext& ctx) const {
  const std::int64_t n_templ = t.dim(0), n_res = t.dim(1);
  expect_f32_shape(t, {n_templ, n_res, n_res, c_t_}, "TemplatePointwiseAttention t");
  expect_f32_shape(z, {n_res, n_res, c_z_}, "TemplatePointwiseAttention z");
  expect_f32_shape(template_mask, {n_templ}, "TemplatePointwiseAttention template_mask");
  expect_f32_shape(dst, {n_res, n_res, c_z_}, "TemplatePointwiseAttention output");
  if (dst.data() == z.data() && !accumulate) {
    throw InternalError("TemplatePointwiseAttention: dst may alias z only when accumulating");
  }

  if (n_templ == 0) {  // nothing to attend to: a zero update
    if (!accumulate) fill_zero(dst);
    return;
  }

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  const std::int64_t H = n_head_, C = c_hidden_, hc = H * C, T = n_templ;
  const std::int64_t block = block_rows(ctx.chunk, n_res);
  const Buffers b = buffers(T, block * n_res).allocate(arena);
  float* bias = b.bias.data_as<float>();
  for (std::int64_t k = 0; k < T; ++k) bias[k] = inf_ * (template_mask.at<float>({k}) - 1.f);
  const float scale = 1.f / std::sqrt(static_cast<float>(C));
  LinearEpilogue epilogue;
  epilogue.accumulate = accumulate;

  for (std::int64_t i0 = 0; i0 < n_res; i0 += block) {
    const std::int64_t i1 = std::min(n_res, i0 + block);
    const std::int64_t rows = (i1 - i0) * n_res;
    const Tensor q = b.q.slice(0, 0, rows);
    const Tensor o = b.o.slice(0, 0, rows);
    query_.forward(z.slice(0, i0, i1), q, arena);
    for (std::int64_t k = 0; k < T; ++k) {
      kv_.forward(t.select(0, k).slice(0, i0, i1), b.kv.select(0, k).slice(0, 0, rows), arena);
    }
    const float* qp = q.data_as<float>();
    const float* kvp = b.kv.data_as<float>();
    float* op = o.data_as<float>();
    float* pp = b.p.data_as<float>();
    const TemplateHeads heads{H, C, T, b.kv.stride(0), scale, bias};
    detail::for_each_row(rows, T * 2 * hc, [&](std::int64_t r) {
      attend_over_templates(heads, qp + r * hc, kvp + r * 2 * hc, pp + r * H * T, op + r * hc);
    });
    output_.forward(o, dst.slice(0, i0, i1), arena, epilogue);
  }
}

}  // namespace cpufold
