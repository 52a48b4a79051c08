// AF2's monomer template embedding (supplement Alg. 2 template lines, Alg. 16 template pair
// stack, Alg. 17 template pointwise attention): per-template pair features -> embedding2d ->
// template pair stack -> output LayerNorm -> pointwise attention from the pair representation,
// added to z; and one torsion-angle MSA row per template.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evoformer/template_pair_block.h"
#include "evoformer/template_pair_features.h"
#include "evoformer/template_pointwise_attention.h"
#include "evoformer/template_single_embedding.h"
#include "evoformer/trunk_inputs.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 2 (template embedding; with Alg. 16 and Alg. 17)
class TemplateEmbedder {
 public:
  // evoformer: ParamScope(store, "evoformer"); the pair parts live under
  // `template_embedding/...`, the torsion-angle rows under `template_single_embedding` and
  // `template_projection`. config: c_m, c_z, c_t, template_* dims, n_template_blocks.
  // Throws WeightsError when the parameters have no template embedding.
  TemplateEmbedder(const ParamScope& evoformer, const ModelConfig& config,
                   TemplateDistogram distogram = {});
  // The same with ParamScope(store, "evoformer").
  TemplateEmbedder(const WeightStore& store, const ModelConfig& config,
                   TemplateDistogram distogram = {});
  ~TemplateEmbedder();
  TemplateEmbedder(TemplateEmbedder&&) noexcept;

  // The whole embedding for the templates of `in` (its template_* features):
  //   z: [n_res, n_res, c_z], in/out: z += template pair embedding (added IN PLACE). The pair
  //      embedding is OpenFold's pointwise attention times (Σ template_mask > 0), so with no
  //      template present z is left untouched (and the pair stack is skipped).
  //   pair_mask: [n_res, n_res], the template pair stack's mask.
  //   m_templ: [n_templ, n_res, c_m], out: the torsion-angle rows to append to the MSA (e.g.
  //      rows [n_clust, n_clust + n_templ) of the MSA buffer).
  //   msa_mask_templ: [n_templ, n_res], out (may be empty): their MSA mask,
  //      template_torsion_angles_mask[..., 2].
  // With n_templ = 0 nothing changes (m_templ and msa_mask_templ have no rows).
  // Memory: the template pair activations [n_templ, n_res, n_res, c_t] (activation_bytes) in
  // ctx.activation_arena(), the largest stage's transients (transient_bytes) in ctx.arena();
  // scratch_bytes is both, for a context where the two arenas are one.
  // Traces template_embedder/call_k/out/template_pair_embedding and
  // out/template_single_embedding, and template_pair_block_<b>/call_k/in_0 and out (all
  // templates stacked).
  void forward(const TrunkInputs& in, const Tensor& z, const Tensor& pair_mask,
               const Tensor& m_templ, const Tensor& msa_mask_templ, const RunContext& ctx) const;

  // The stages, for tests and for callers that schedule them differently.
  // t: [n_templ, n_res, n_res, c_t] <- embedding2d(pair features) of every template.
  void embed_template_pairs(const TrunkInputs& in, const Tensor& t, const RunContext& ctx) const;
  // t <- output_layer_norm(TemplatePairStack(t)), every template on its own, in place.
  void run_pair_stack(const Tensor& t, const Tensor& pair_mask, const RunContext& ctx) const;
  // dst = (or += when accumulating) the pair embedding: pointwise attention from z over t,
  // times (Σ template_mask > 0). dst may be z when accumulating.
  void attend(const Tensor& t, const Tensor& z, const Tensor& template_mask, const Tensor& dst,
              bool accumulate, const RunContext& ctx) const;
  // The torsion-angle rows and their mask (see forward).
  void embed_single(const TrunkInputs& in, const Tensor& m_templ, const Tensor& msa_mask_templ,
                    const RunContext& ctx) const;

  std::size_t scratch_bytes(std::int64_t n_templ, std::int64_t n_res, std::int64_t chunk) const;
  std::size_t activation_bytes(std::int64_t n_templ, std::int64_t n_res) const;
  // edge_apart: the triangle multiplications' right edges are in ctx.activations
  // (edge_bytes, above the template pair activations), not counted here. tracing: with a
  // tracer the pair embedding takes a buffer of its own (N²·c_z).
  std::size_t transient_bytes(std::int64_t n_templ, std::int64_t n_res, std::int64_t chunk,
                              bool edge_apart = false, bool tracing = true) const;
  std::size_t edge_bytes(std::int64_t n_res) const;

  std::int64_t c_t() const { return c_t_; }

 private:
  // forward()'s own buffers, each stated once in the list that both allocates and sizes them.
  struct PairActivations {
    Tensor t;  // the templates' pair activations [n_templ, n_res, n_res, c_t]
  };
  struct TracedEmbedding {
    Tensor pair;  // with a tracer: the pair embedding (or zeros) traced apart [n_res, n_res, c_z]
  };
  BufferList<PairActivations> activation_buffers(std::int64_t n_templ, std::int64_t n_res) const;
  BufferList<TracedEmbedding> traced_buffers(std::int64_t n_res) const;

  std::int64_t c_m_, c_z_, c_t_;
  TemplatePairEmbedder pair_embedder_;
  std::vector<TemplatePairBlock> blocks_;  // AF2 Alg. 16
  LayerNorm output_norm_;
  TemplatePointwiseAttention attention_;
  TemplateSingleEmbedding single_;
};

}  // namespace cpufold
