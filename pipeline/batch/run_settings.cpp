#include "pipeline/batch/run_settings.h"

namespace cpufold {

FeatureConfig model_feature_config(const PredictOptions& o, const std::string& model,
                                   std::uint64_t seed) {
  FeatureConfig config = af2_feature_config(model);
  if (o.max_seq) config.max_msa_clusters = *o.max_seq;
  if (o.max_extra_seq) config.max_extra_msa = *o.max_extra_seq;
  config.seed = seed;
  return config;
}

RunOptions model_run_options(const PredictOptions& o) {
  RunOptions run;
  run.recycles = o.num_recycle;
  run.ensemble = o.num_ensemble;
  run.early_stop_tolerance = o.recycle_early_stop_tolerance;
  run.chunk = o.chunk_size;
  run.mem_budget = o.mem_budget;
  run.spill_dir = o.spill_dir;
  run.spill_numa_node = o.spill_numa_node;
  return run;
}

std::int64_t feature_samples(const PredictOptions& o) {
  return (o.num_recycle + 1) * o.num_ensemble;
}

}  // namespace cpufold
