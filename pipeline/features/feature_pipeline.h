// The AF2 monomer feature pipeline from raw features to the processed batch of one
// recycling iteration (OpenFold/AF2 input pipeline in predict mode, without padding: cpufold
// never pads, a row that does not exist is simply absent). Per iteration (AF2 supplement
// 1.2.7): sample_msa, make_masked_msa, nearest_neighbor_clusters, summarize_clusters,
// crop_extra_msa, make_msa_feat; once: the MSA in AF2 order and its profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evoformer/trunk_inputs.h"
#include "memory/arena.h"
#include "pipeline/features/feature_sampler.h"
#include "pipeline/features/feature_source.h"
#include "pipeline/features/raw_features.h"

namespace cpufold {

struct FeatureConfig {
  std::int64_t max_msa_clusters = 512;  // cluster rows (query included)
  std::int64_t max_extra_msa = 1024;
  double masked_msa_fraction = 0.15;  // applied at inference too, as AF2 does
  bool templates = false;             // feed raw templates (when present) to the model
  std::int64_t max_templates = 4;     // AF2 feeds the first max_templates hits (no subsampling)
  std::uint64_t seed = 0;
};

// AF2's per-model data config: model_1 and model_2 use templates (512 - 4 clusters),
// model_1, 3 and 4 take 5120 extra rows, the others 1024. `model` is "model_N" or
// "model_N_ptm". InputError for an unknown model name.
FeatureConfig af2_feature_config(const std::string& model);

class FeaturePipeline {
 public:
  FeaturePipeline(RawFeatures raw, FeatureConfig config);

  std::int64_t n_res() const;
  std::int64_t n_seq() const;    // cluster rows fed to the Evoformer
  std::int64_t n_extra() const;  // extra-MSA rows
  std::int64_t n_templ() const;

  // The processed features of one iteration, with every random choice from `sampler`. The
  // outputs come from `arena` (exactly bytes_per_iteration()); working buffers are temporary
  // std::vectors of about n_seq x n_res bytes plus one int per extra row.
  TrunkInputs process(FeatureSampler& sampler, Arena& arena) const;
  // Arena bytes process() takes.
  std::size_t bytes_per_iteration() const;

  // Iteration k draws from RandomFeatureSampler(config.seed, k) (AF2 resamples per recycle).
  // The source refers to this pipeline, which must outlive it.
  FeatureSource source(std::int64_t iterations) const;

 private:
  RawFeatures raw_;
  FeatureConfig config_;
  std::vector<std::uint8_t> msa_;  // [n_msa, n_res] the raw MSA in AF2 order
  std::vector<float> profile_;     // [n_res, 22] AF2 hhblits_profile over every raw row
};

}  // namespace cpufold
