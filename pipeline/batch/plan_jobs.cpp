#include "pipeline/batch/plan_jobs.h"

#include <map>

#include "memory/error.h"
#include "pipeline/batch/job_msas.h"
#include "pipeline/batch/run_settings.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/features/raw_features.h"
#include "pipeline/runner/model_cache.h"
#include "pipeline/runner/model_flops.h"

namespace cpufold {

std::size_t shared_weight_bytes(const MemoryPlan& plan) {
  for (const PlannedBlock& b : plan.chosen.blocks) {
    if (b.name.starts_with("shared weights")) return b.bytes;
  }
  return 0;
}

JobPlan plan_job(const PredictJob& job, const PredictOptions& o, ModelCache& models,
                 const std::map<int, std::filesystem::path>& params, const RunOptions& run) {
  JobPlan plan;
  plan.name = job.name;
  plan.n_res = static_cast<std::int64_t>(job.sequence.size());
  plan.error = job.error;
  if (!plan.error.empty()) return plan;
  try {
    const JobMsas m = load_job_msas(job, msa_sources(o), [](const std::string&) {});
    RawFeatures raw = make_raw_features(job.sequence, m.msas, m.names);
    // --templates: planned for AF2's most (4); the search itself runs with the job.
    if (o.templates) raw.templates = empty_templates(4, raw.n_res);
    bool first = true;
    for (const auto& [number, path] : params) {
      const std::string model = "model_" + std::to_string(number);
      const FeaturePipeline pipeline(raw, model_feature_config(o, model, o.random_seed));
      const ModelRunner& runner = *models.get(number).runner;
      const FeatureSource source = pipeline.source(feature_samples(o));
      const TrunkDims d = runner.dims_of(source);
      RunOptions model_run = run;
      model_run.other_weight_bytes = models.other_weight_bytes(number);
      MemoryPlan p = runner.plan(d, source.bytes_per_iteration, model_run);
      plan.flops +=
          o.num_seeds * model_flops(runner.config(), {d.n_res, d.n_seq, d.n_extra, d.n_templ},
                                    (o.num_recycle + 1) * o.num_ensemble);
      if (first || p.dram_peak_bytes > plan.plan.dram_peak_bytes) {
        plan.model = model;
        plan.n_seq = d.n_seq;
        plan.n_extra = d.n_extra;
        plan.n_templ = d.n_templ;
        plan.plan = std::move(p);
        first = false;
      }
    }
  } catch (const InputError& e) {
    plan.error = e.what();
  }
  return plan;
}

std::vector<JobPlan> plan_jobs(const PredictOptions& o) {
  const auto [params, jobs] = batch_inputs(o);
  ModelCache models(params, o.model_type, o.mem_budget, o.precision);

  std::vector<JobPlan> plans;
  for (const PredictJob& job : jobs.jobs) {
    JobPlan plan = plan_job(job, o, models, params, model_run_options(o));
    if (o.progress) {
      o.progress(plan.name + ": " +
                 (plan.error.empty() ? "planned" : "cannot plan: " + plan.error));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace cpufold
