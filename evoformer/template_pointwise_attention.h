// AF2's template pointwise attention (supplement Alg. 17): every pair (i, j) of the pair
// representation attends over the templates' pair representations at (i, j).
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 17
// q = z[i, j]·W_q, k_t = t_t[i, j]·W_k, v_t = t_t[i, j]·W_v (no biases, no gating);
// out[i, j] = W_o·(Σ_t softmax_t(q·k_t/√c + inf·(template_mask_t - 1))·v_t) + b_o.
// AF2-DEVIATION: the mask bias uses inf = 1e5 as OpenFold does (the reference follows it);
// this only matters for absent templates.
class TemplatePointwiseAttention {
 public:
  // scope: `evoformer/template_embedding/attention` (query_w [c_z, H, c], key_w / value_w
  // [c_t, H, c], output_w [H, c, c_z], output_b [c_z]); dims: ModelConfig::
  // template_pointwise_attention.
  TemplatePointwiseAttention(const ParamScope& scope, std::int64_t c_z, std::int64_t c_t,
                             const AttentionDims& dims, float inf = 1e5f);

  // t: [n_templ, n_res, n_res, c_t] (the normalised template pair stack output; each
  //    template's rows must collapse, e.g. contiguous),
  // z: [n_res, n_res, c_z] the query, template_mask: [n_templ] f32
  //   -> dst: [n_res, n_res, c_z]: dst = out, or dst += out when `accumulate`; dst may BE z
  //      when accumulating (each row block's query is projected before its output lands).
  // Without templates (n_templ = 0) the update is zero.
  // Rows i are processed ctx.chunk at a time (<= 0: all); results do not depend on it.
  // Scratch: scratch_bytes(n_templ, n_res, ctx.chunk, accumulate).
  void forward(const Tensor& t, const Tensor& z, const Tensor& template_mask, const Tensor& dst,
               bool accumulate, const RunContext& ctx) const;

  std::size_t scratch_bytes(std::int64_t n_templ, std::int64_t n_res, std::int64_t chunk,
                            bool accumulate) const;

 private:
  // forward()'s buffers for blocks of `rows` pairs, stated once in the list that both
  // allocates and sizes them.
  struct Buffers {
    Tensor bias;  // [n_templ]: inf·(template_mask - 1)
    Tensor q;     // the block's queries [rows, H·c]
    Tensor kv;    // each template's keys | values [n_templ, rows, 2·H·c]
    Tensor o;     // the attention output [rows, H·c]
    Tensor p;     // the softmax over templates [rows, H, n_templ]
  };
  BufferList<Buffers> buffers(std::int64_t n_templ, std::int64_t rows) const;

  std::int64_t c_z_, c_t_, n_head_, c_hidden_;
  float inf_;
  Linear query_;   // [c_z] -> [H, c]
  Linear kv_;      // [c_t] -> [2, H, c]: key | value
  Linear output_;  // [H, c] -> [c_z]
};

}  // namespace cpufold
