#include "evoformer/template_embedder.h"

#include <algorithm>
#include <string>
#include <vector>

#include "evoformer/embedder_support.h"
#include "ops/activations.h"
#include "ops/row_view.h"

namespace cpufold {

namespace {

constexpr char kSingleTemplate[] = "template_embedding/single_template_embedding";

std::vector<TemplatePairBlock> make_blocks(const ParamScope& evoformer, const ModelConfig& config) {
  std::vector<TemplatePairBlock> blocks;
  blocks.reserve(static_cast<std::size_t>(config.n_template_blocks));
  const std::string path =
      evoformer.path() + "/" + kSingleTemplate + "/template_pair_stack/__layer_stack_no_state";
  for (std::int64_t b = 0; b < config.n_template_blocks; ++b) {
    blocks.emplace_back(evoformer.at(path, b, config.n_template_blocks), config);
  }
  return blocks;
}

bool any_template(const Tensor& template_mask) {
  float sum = 0.f;
  for (std::int64_t t = 0; t < template_mask.numel(); ++t) sum += template_mask.at<float>({t});
  return sum > 0.f;
}

const ModelConfig& require_templates(const ModelConfig& config) {
  if (!config.templates) {
    throw WeightsError("TemplateEmbedder: the parameters have no template embedding (" +
                       config.preset_family() + ")");
  }
  return config;
}

}  // namespace

TemplateEmbedder::TemplateEmbedder(const ParamScope& evoformer, const ModelConfig& config,
                                   TemplateDistogram distogram)
    : c_m_(require_templates(config).c_m),
      c_z_(config.c_z),
      c_t_(config.c_t),
      pair_embedder_(evoformer / kSingleTemplate, config.template_pair_feat_dim, config.c_t,
                     distogram),
      blocks_(make_blocks(evoformer, config)),
      output_norm_((evoformer / kSingleTemplate / "output_layer_norm").layer_norm(config.c_t)),
      attention_(evoformer / "template_embedding/attention", config.c_z, config.c_t,
                 config.template_pointwise_attention),
      single_(evoformer, config.template_single_feat_dim, config.c_m) {}

TemplateEmbedder::TemplateEmbedder(const WeightStore& store, const ModelConfig& config,
                                   TemplateDistogram distogram)
    : TemplateEmbedder(ParamScope(store, "evoformer"), config, distogram) {}

TemplateEmbedder::~TemplateEmbedder() = default;
TemplateEmbedder::TemplateEmbedder(TemplateEmbedder&&) noexcept = default;

BufferList<TemplateEmbedder::PairActivations> TemplateEmbedder::activation_buffers(
    std::int64_t n_templ, std::int64_t n_res) const {
  return {{&PairActivations::t, DType::f32, Shape{n_templ, n_res, n_res, c_t_}}};
}

BufferList<TemplateEmbedder::TracedEmbedding> TemplateEmbedder::traced_buffers(
    std::int64_t n_res) const {
  return {{&TracedEmbedding::pair, DType::f32, Shape{n_res, n_res, c_z_}}};
}

std::size_t TemplateEmbedder::activation_bytes(std::int64_t n_templ, std::int64_t n_res) const {
  return activation_buffers(n_templ, n_res).bytes();
}

std::size_t TemplateEmbedder::transient_bytes(std::int64_t n_templ, std::int64_t n_res,
                                              std::int64_t chunk, bool edge_apart,
                                              bool tracing) const {
  std::size_t stage = TemplatePairEmbedder::scratch_bytes(n_res);
  for (const TemplatePairBlock& b : blocks_)
    stage = std::max(stage, b.scratch_bytes(n_res, chunk, edge_apart));
  // With tracing the pair embedding (zeros without a template) gets its own buffer before it
  // is added to z.
  stage = std::max(stage, attention_.scratch_bytes(n_templ, n_res, chunk, /*accumulate=*/true) +
                              (tracing ? traced_buffers(n_res).bytes() : 0));
  return std::max(stage, single_.scratch_bytes(n_templ, n_res));
}

std::size_t TemplateEmbedder::edge_bytes(std::int64_t n_res) const {
  std::size_t edge = 0;
  for (const TemplatePairBlock& b : blocks_) edge = std::max(edge, b.edge_bytes(n_res));
  return edge;
}

std::size_t TemplateEmbedder::scratch_bytes(std::int64_t n_templ, std::int64_t n_res,
                                            std::int64_t chunk) const {
  return activation_bytes(n_templ, n_res) + transient_bytes(n_templ, n_res, chunk);
}

void TemplateEmbedder::embed_template_pairs(const TrunkInputs& in, const Tensor& t,
                                            const RunContext& ctx) const {
  const std::int64_t n_templ = in.n_templ();
  const std::int64_t n_res = n_templ > 0 ? in.template_aatype.dim(1) : t.dim(1);
  expect_f32_shape(t, {n_templ, n_res, n_res, c_t_}, "template pair activations");
  for (std::int64_t k = 0; k < n_templ; ++k) pair_embedder_.forward(in, k, t.select(0, k), ctx);
}

void TemplateEmbedder::run_pair_stack(const Tensor& t, const Tensor& pair_mask,
                                      const RunContext& ctx) const {
  // Block by block over all templates (each template on its own), so the trace holds the
  // stacked templates after every block as the reference's does.
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const std::string module = "template_pair_block_" + std::to_string(b);
    ctx.trace(module, "in_0", t);
    for (std::int64_t k = 0; k < t.dim(0); ++k) {
      const Tensor template_k = t.select(0, k);
      blocks_[b].forward(template_k, pair_mask, ctx);
      // Spilled, only the template being worked on stays resident.
      if (ctx.activations != nullptr)
        ctx.activations->evict(template_k.data(), template_k.nbytes());
    }
    ctx.trace(module, "out", t);
  }
  output_norm_.forward(t, t);
}

void TemplateEmbedder::attend(const Tensor& t, const Tensor& z, const Tensor& template_mask,
                              const Tensor& dst, bool accumulate, const RunContext& ctx) const {
  if (any_template(template_mask)) {
    attention_.forward(t, z, template_mask, dst, accumulate, ctx);
  } else if (!accumulate) {  // OpenFold multiplies the embedding by (Σ mask > 0) = 0
    expect_f32_shape(dst, z.shape(), "template pair embedding");
    const RowView v = row_view(dst, "template pair embedding");
    for (std::int64_t r = 0; r < v.rows; ++r) std::fill(v.row(r), v.row(r) + v.cols, 0.f);
  }
}

void TemplateEmbedder::embed_single(const TrunkInputs& in, const Tensor& m_templ,
                                    const Tensor& msa_mask_templ, const RunContext& ctx) const {
  single_.forward(in, m_templ, msa_mask_templ, ctx);
}

void TemplateEmbedder::forward(const TrunkInputs& in, const Tensor& z, const Tensor& pair_mask,
                               const Tensor& m_templ, const Tensor& msa_mask_templ,
                               const RunContext& ctx) const {
  const std::int64_t n_templ = in.n_templ();
  const std::int64_t n_res = z.dim(0);
  expect_f32_shape(z, {n_res, n_res, c_z_}, "TemplateEmbedder z");
  if (n_templ > 0) expect_f32_shape(in.template_mask, {n_templ}, "template_mask");

  Arena& arena = ctx.arena();
  if (n_templ > 0 && any_template(in.template_mask)) {
    // The templates' pair activations are the trunk's largest after the pair at long lengths
    // (n_templ·N²·c_t): they go where the MSA representations go, on the spill tier if planned.
    Arena& activations = ctx.activation_arena();
    ArenaScope activations_scope(activations);
    const Tensor t = activation_buffers(n_templ, n_res).allocate(activations).t;
    ArenaScope scope(arena);
    embed_template_pairs(in, t, ctx);
    run_pair_stack(t, pair_mask, ctx);
    if (ctx.tracer == nullptr) {
      attend(t, z, in.template_mask, z, /*accumulate=*/true, ctx);
    } else {
      const Tensor embedding = traced_buffers(n_res).allocate(arena).pair;
      attend(t, z, in.template_mask, embedding, /*accumulate=*/false, ctx);
      ctx.trace("template_embedder", "out/template_pair_embedding", embedding);
      add_inplace(z, embedding);
    }
  } else if (ctx.tracer != nullptr) {
    ArenaScope scope(arena);
    const Tensor zero = traced_buffers(n_res).allocate(arena).pair;
    std::fill(zero.data_as<float>(), zero.data_as<float>() + zero.numel(), 0.f);
    ctx.trace("template_embedder", "out/template_pair_embedding", zero);
  }
  if (n_templ == 0) return;  // no rows to append
  embed_single(in, m_templ, msa_mask_templ, ctx);
  ctx.trace("template_embedder", "out/template_single_embedding", m_templ);
}

}  // namespace cpufold
