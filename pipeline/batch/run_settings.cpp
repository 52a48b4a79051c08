#include "pipeline/batch/run_settings.h"

#include <cstdio>
#include <utility>

namespace cpufold {

FeatureConfig model_feature_config(const PredictOptions& o, const std::string& model,
                                   std::uint64_t seed) {
  FeatureConfig config = af2_feature_config(model);
  // ColabFold (batch.py, alphafold/models.py) overrides AF2's per-model depths: max_seq 512
  // and max_extra_seq 5120 for every monomer model unless given (AF2 has 508 clusters for
  // models 1 and 2 and 1024 extra rows for models 2 and 5). With --templates the template
  // models keep AF2's 508 (512 less the 4 template rows), as ColabFold's do.
  const bool template_model = o.templates && config.templates;
  config.max_msa_clusters =
      o.max_seq.value_or(template_model ? config.max_msa_clusters : kColabfoldMaxSeq);
  config.max_extra_msa = o.max_extra_seq.value_or(kColabfoldMaxExtraSeq);
  config.seed = seed;
  return config;
}

RunOptions model_run_options(const PredictOptions& o) {
  RunOptions run;
  static_cast<SharedRunOptions&>(run) = o;
  run.recycles = o.num_recycle;
  run.ensemble = o.num_ensemble;
  run.early_stop_tolerance = o.recycle_early_stop_tolerance;
  return run;
}

RunOptions batch_run_options(const PredictOptions& o, RankBy rank) {
  RunOptions run = model_run_options(o);
  run.stop_when = stop_at_score(o, rank);
  run.keep_iterations = o.save_recycles;  // and so no checkpoints (the runner's rule)
  char context[64];
  std::snprintf(context, sizeof context, "stop_at_score %a rank %d", o.stop_at_score,
                static_cast<int>(rank));
  run.checkpoint_context = context;
  return run;
}

std::function<bool(const Prediction&)> stop_at_score(const PredictOptions& o, RankBy rank) {
  if (o.stop_at_score >= 100) return {};
  return [stop = o.stop_at_score, rank](const Prediction& now) {
    return ranking_score(now, rank) > stop;
  };
}

std::int64_t feature_samples(const PredictOptions& o) {
  return (o.num_recycle + 1) * o.num_ensemble;
}

}  // namespace cpufold
