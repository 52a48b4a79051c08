#include "pipeline/runner/prediction_heads.h"

#include <algorithm>

#include "pipeline/runner/model_runner.h"

namespace cpufold {
PredictionHeads::PredictionHeads(const ParamScope& root, const ModelConfig& c)
    : config_(c),
      lddt_(root.at("predicted_lddt_head"), c.c_s, c.c_lddt_hidden, c.lddt_bins),
      distogram_(root.at("distogram_head"), c.c_z, c.distogram_bins),
      masked_msa_(root.at("masked_msa_head"), c.c_m, c.masked_msa_classes),
      experimentally_resolved_(root.at("experimentally_resolved_head"), c.c_s, c.atom_types) {
  if (c.ptm_head)
    aligned_error_.emplace(root.at("predicted_aligned_error_head"), c.c_z, c.pae_bins);
}

void PredictionHeads::allocate_outputs(Prediction& p, Arena& arena, std::int64_t n_seq,
                                       std::int64_t n) const {
  output_buffers(n_seq, n).allocate_into(arena, p);
  p.has_pae = aligned_error_.has_value();
}

BufferList<Prediction> PredictionHeads::output_buffers(std::int64_t n_seq, std::int64_t n) const {
  const ModelConfig& c = config_;
  const bool pae = aligned_error_.has_value();
  return BufferList<Prediction>{
      {&Prediction::lddt_logits, DType::f32, Shape{n, c.lddt_bins}},
      {&Prediction::plddt, DType::f32, Shape{n}},
      {&Prediction::distogram_logits, DType::f32, Shape{n, n, c.distogram_bins}},
      {&Prediction::masked_msa_logits, DType::f32, Shape{n_seq, n, c.masked_msa_classes}},
      {&Prediction::experimentally_resolved_logits, DType::f32, Shape{n, c.atom_types}}}
      .add_if(pae, {&Prediction::tm_logits, DType::f32, Shape{n, n, c.pae_bins}})
      .add_if(pae, {&Prediction::aligned_confidence_probs, DType::f32, Shape{n, n, c.pae_bins}})
      .add_if(pae, {&Prediction::predicted_aligned_error, DType::f32, Shape{n, n}});
}

std::size_t PredictionHeads::output_bytes(std::int64_t n_seq, std::int64_t n) const {
  return output_buffers(n_seq, n).bytes();
}

std::size_t PredictionHeads::scratch_bytes(std::int64_t n_seq, std::int64_t n) const {
  std::size_t b =
      std::max({lddt_.scratch_bytes(n), distogram_.scratch_bytes(n),
                masked_msa_.scratch_bytes(n_seq, n), experimentally_resolved_.scratch_bytes(n)});
  if (aligned_error_) b = std::max(b, aligned_error_->scratch_bytes(n, true));
  return b;
}

void PredictionHeads::forward(Prediction& p, const Tensor& seq_mask, const RunContext& ctx) const {
  lddt_.forward(p.sm.single, p.lddt_logits, p.plddt, ctx);
  distogram_.forward(p.pair, p.distogram_logits, ctx);
  masked_msa_.forward(p.msa, p.masked_msa_logits, ctx);
  // AF2 feeds the Evoformer's single (not the structure module's) to this head.
  experimentally_resolved_.forward(p.single, p.experimentally_resolved_logits, ctx);
  if (aligned_error_) {
    const AlignedErrorScores s = aligned_error_->forward(
        p.pair, seq_mask, p.tm_logits, p.aligned_confidence_probs, p.predicted_aligned_error, ctx);
    p.max_predicted_aligned_error = s.max_predicted_aligned_error;
    p.ptm_score = s.ptm;
  }
}

}  // namespace cpufold
