#include "pipeline/batch/plan_jobs.h"

#include <algorithm>
#include <map>
#include <set>

#include "memory/error.h"
#include "pipeline/batch/deepest_msa.h"
#include "pipeline/batch/job_msas.h"
#include "pipeline/batch/job_search.h"
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

namespace {

// The deepest MSA any of the models reads: its cluster rows and extra rows together.
std::int64_t deepest_rows(const PredictOptions& o,
                          const std::map<int, std::filesystem::path>& params) {
  std::int64_t rows = 1;
  for (const auto& [number, path] : params) {
    const FeatureConfig c = model_feature_config(o, "model_" + std::to_string(number), 0);
    rows = std::max(rows, c.max_msa_clusters + c.max_extra_msa);
  }
  return rows;
}

}  // namespace

JobPlan plan_job(const PredictJob& job, const PredictOptions& o, ModelCache& models,
                 const std::map<int, std::filesystem::path>& params, const RunOptions& run,
                 bool msa_pending) {
  JobPlan plan;
  plan.name = job.name;
  plan.n_res = static_cast<std::int64_t>(job.sequence.size());
  plan.error = job.error;
  plan.deepest_msa = msa_pending;
  if (!plan.error.empty()) return plan;
  try {
    RawFeatures raw;
    if (msa_pending) {
      const Msa deepest = deepest_msa(job.sequence, deepest_rows(o, params));
      const std::string name = "the deepest MSA (not searched yet)";
      raw = make_raw_features(job.sequence, {&deepest, 1}, {&name, 1});
    } else {
      const JobMsas m = load_job_msas(job, msa_sources(o), [](const std::string&) {});
      raw = make_raw_features(job.sequence, m.msas, m.names);
    }
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

  const std::set<std::string> pending = jobs_to_search(o, jobs.jobs);
  std::vector<JobPlan> plans;
  for (const PredictJob& job : jobs.jobs) {
    JobPlan plan =
        plan_job(job, o, models, params, model_run_options(o), pending.contains(job.name));
    if (o.progress) {
      o.progress(plan.name + ": " +
                 (plan.error.empty() ? "planned" : "cannot plan: " + plan.error));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace cpufold
