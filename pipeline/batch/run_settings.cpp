#include "pipeline/batch/run_settings.h"

#include <cstdio>
#include <utility>

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
  run.chunks = ChunkSizes::all(o.chunk_size);
  run.mem_budget = o.mem_budget;
  run.spill_dir = o.spill_dir;
  run.spill_numa_node = o.spill_numa_node;
  return run;
}

RunOptions batch_run_options(const PredictOptions& o, RankBy rank) {
  RunOptions run = model_run_options(o);
  run.checkpoints = !o.save_recycles;
  char context[64];
  std::snprintf(context, sizeof context, "stop_at_score %a rank %d", o.stop_at_score,
                static_cast<int>(rank));
  run.checkpoint_context = context;
  return run;
}

AfterIteration recycle_checks(const PredictOptions& o, RankBy rank,
                              std::function<void(const Prediction&)> save_recycle) {
  if (!o.save_recycles && o.stop_at_score >= 100) return {};
  return [save = o.save_recycles, stop = o.stop_at_score, rank,
          save_recycle = std::move(save_recycle)](const Prediction& now, std::int64_t) {
    if (save) save_recycle(now);
    return ranking_score(now, rank) > stop;
  };
}

std::int64_t feature_samples(const PredictOptions& o) {
  return (o.num_recycle + 1) * o.num_ensemble;
}

}  // namespace cpufold
