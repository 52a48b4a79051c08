#include "pipeline/features/feature_pipeline.h"

#include <algorithm>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/features/masked_msa.h"
#include "pipeline/features/msa_clustering.h"
#include "pipeline/features/msa_feat.h"
#include "pipeline/features/msa_sampling.h"
#include "pipeline/features/trunk_input_buffers.h"

namespace cpufold {
namespace {

void check_raw(const RawFeatures& raw) {
  const auto n = static_cast<std::size_t>(raw.n_res);
  const auto cells = static_cast<std::size_t>(raw.n_msa) * n;
  if (raw.n_res < 1) throw InputError("the query has no residues");
  if (raw.aatype.size() != n || raw.residue_index.size() != n)
    throw InputError("aatype and residue_index must have one entry per residue");
  if (raw.n_msa < 1 || raw.msa.size() != cells || raw.deletion_matrix.size() != cells) {
    throw InputError("the MSA must hold at least the query row, with " + std::to_string(n) +
                     " columns and one deletion count per cell");
  }
  for (std::int32_t t : raw.aatype)
    if (t < 0 || t > kAf2UnknownRestype)
      throw InputError("aatype " + std::to_string(t) + " is not 0-20");
  for (std::int32_t id : raw.msa)
    if (id < 0 || id > kMsaGapToken)
      throw InputError("MSA token " + std::to_string(id) + " is not an HHblits id 0-21");
}

// Drops every hit after the first `max_templates` (AF2 max_templates, predict mode).
void keep_first_templates(RawTemplates& t, std::int64_t max_templates) {
  if (t.n_templ <= max_templates) return;
  const auto keep = [&](std::vector<float>& v) {
    v.resize(v.size() / static_cast<std::size_t>(t.n_templ) *
             static_cast<std::size_t>(max_templates));
  };
  keep(t.aatype_one_hot);
  keep(t.all_atom_positions);
  keep(t.all_atom_mask);
  keep(t.sum_probs);
  t.n_templ = max_templates;
}

}  // namespace

// AF2 alphafold/model/config.py CONFIG_DIFFS (Jumper et al. 2021, Suppl. Table 5).
FeatureConfig af2_feature_config(const std::string& model) {
  const bool plain = model.size() == 7, ptm = model.size() == 11 && model.ends_with("_ptm");
  if (!model.starts_with("model_") || !(plain || ptm) || model[6] < '1' || model[6] > '5') {
    throw InputError("unknown AF2 model '" + model +
                     "': expected model_1 ... model_5, optionally with _ptm");
  }
  const int k = model[6] - '0';
  FeatureConfig c;
  c.templates = k == 1 || k == 2;
  // reduce_msa_clusters_by_max_templates: 512 - max_templates (4) for the template models.
  c.max_msa_clusters = c.templates ? 512 - 4 : 512;
  c.max_extra_msa = (k == 1 || k == 3 || k == 4) ? 5120 : 1024;
  return c;
}

FeaturePipeline::FeaturePipeline(RawFeatures raw, FeatureConfig config)
    : raw_(std::move(raw)), config_(config) {
  check_raw(raw_);
  if (config_.max_msa_clusters < 1) {
    throw InputError("the number of MSA clusters must be at least 1 (got " +
                     std::to_string(config_.max_msa_clusters) + ")");
  }
  if (config_.max_extra_msa < 0) {
    throw InputError("the number of extra MSA rows cannot be negative (got " +
                     std::to_string(config_.max_extra_msa) + ")");
  }
  if (config_.max_templates < 0) {
    throw InputError("the number of templates cannot be negative (got " +
                     std::to_string(config_.max_templates) + ")");
  }
  keep_first_templates(raw_.templates, config_.max_templates);
  if (n_templ() > 0 && raw_.templates.n_res != raw_.n_res) {
    throw InputError("the templates have " + std::to_string(raw_.templates.n_res) +
                     " residues, the query " + std::to_string(raw_.n_res));
  }
  // AF2 correct_msa_restypes, then make_hhblits_profile over every raw row.
  msa_.resize(raw_.msa.size());
  std::transform(raw_.msa.begin(), raw_.msa.end(), msa_.begin(), [](std::int32_t id) {
    return static_cast<std::uint8_t>(kHhblitsToAf2[static_cast<std::size_t>(id)]);
  });
  profile_ = msa_profile(msa_, raw_.n_msa, raw_.n_res);
}

std::int64_t FeaturePipeline::n_res() const {
  return raw_.n_res;
}
std::int64_t FeaturePipeline::n_seq() const {
  return std::min(config_.max_msa_clusters, raw_.n_msa);
}
std::int64_t FeaturePipeline::n_extra() const {
  return std::min(config_.max_extra_msa, raw_.n_msa - n_seq());
}
std::int64_t FeaturePipeline::n_templ() const {
  return config_.templates ? raw_.templates.n_templ : 0;
}

std::size_t FeaturePipeline::bytes_per_iteration() const {
  std::size_t bytes = trunk_input_buffers(n_res(), n_seq(), n_extra()).bytes();
  if (n_templ() > 0) bytes += template_inputs_bytes(n_templ(), n_res());
  return bytes;
}

TrunkInputs FeaturePipeline::process(FeatureSampler& sampler, Arena& arena) const {
  const std::int64_t n = raw_.n_res;
  // Random choices in AF2's order: sample_msa, make_masked_msa, crop_extra_msa.
  const MsaSample sample = sample_msa(raw_.n_msa, config_.max_msa_clusters, sampler);
  const auto n_seq = static_cast<std::int64_t>(sample.cluster_rows.size());
  std::vector<std::uint8_t> bert(static_cast<std::size_t>(n_seq * n));
  make_masked_msa(msa_, n, sample.cluster_rows, profile_, config_.masked_msa_fraction, sampler,
                  bert);
  const std::vector<std::int64_t> extra =
      config_.max_extra_msa > 0 ? crop_extra_msa(sample.extra_rows, config_.max_extra_msa, sampler)
                                : std::vector<std::int64_t>{};
  // Clustering sees every non-centre row, before the extra rows are cropped.
  const std::vector<std::int32_t> assignment =
      nearest_neighbor_clusters(bert, msa_, n, sample.extra_rows);

  const auto n_extra = static_cast<std::int64_t>(extra.size());
  TrunkInputs in = trunk_input_buffers(n, n_seq, n_extra).allocate(arena);
  for (const Tensor* mask : {&in.seq_mask, &in.msa_mask, &in.extra_msa_mask})
    std::fill_n(mask->data_as<float>(), mask->numel(), 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    in.aatype.data_as<std::int64_t>()[i] = raw_.aatype[static_cast<std::size_t>(i)];
    in.residue_index.data_as<std::int64_t>()[i] = raw_.residue_index[static_cast<std::size_t>(i)];
  }
  make_target_feat(raw_.aatype, in.target_feat);

  make_msa_feat(bert, raw_.deletion_matrix, n, sample.cluster_rows, in.msa_feat);
  summarize_clusters(bert, msa_, raw_.deletion_matrix, n, sample.cluster_rows, sample.extra_rows,
                     assignment, in.msa_feat);

  make_extra_msa_features(msa_, raw_.deletion_matrix, n, extra, in.extra_msa, in.extra_has_deletion,
                          in.extra_deletion_value);

  if (n_templ() > 0) process_templates(raw_.templates, in, arena);
  return in;
}

FeatureSource FeaturePipeline::source(std::int64_t iterations) const {
  FeatureSource s;
  s.iterations = iterations;
  s.bytes_per_iteration = bytes_per_iteration();
  s.read = [this](std::int64_t iteration, Arena& arena) {
    RandomFeatureSampler sampler(config_.seed, iteration);
    return process(sampler, arena);
  };
  return s;
}

}  // namespace cpufold
