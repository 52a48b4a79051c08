#include "pipeline/runner/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "io/feature_file.h"
#include "io/hdf5_tensor_file.h"
#include "memory/peak_tracker.h"
#include "pipeline/features/reference_features.h"
#include "pipeline/runner/finite_outputs.h"
#include "pipeline/runner/hdf5_tracer.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/prediction_h5.h"

namespace cpufold {
namespace {

using Clock = std::chrono::steady_clock;

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Every iteration of the file's inputs/ group, read as the runner asks for it.
FeatureSource file_source(const Hdf5TensorReader& features, const ModelConfig& config) {
  FeatureSource source;
  source.iterations = feature_iterations(features);
  source.bytes_per_iteration = trunk_inputs_bytes(features, config.templates);
  source.read = [&features, &config](std::int64_t k, Arena& arena) {
    return read_trunk_inputs(features, k, config.templates, arena);
  };
  return source;
}

RunOptions run_options(const EvaluateOptions& o, std::int64_t available, Tracer* tracer) {
  RunOptions run;
  static_cast<SharedRunOptions&>(run) = o;
  run.recycles = o.recycles.value_or(available - 1);
  if (run.recycles < 0 || run.recycles + 1 > available) {
    throw InputError(o.features.string() + " holds features for " + std::to_string(available) +
                     " iteration(s); --recycles " + std::to_string(run.recycles) + " needs " +
                     std::to_string(run.recycles + 1));
  }
  run.early_stop_tolerance = o.early_stop_tolerance;
  run.tracer = tracer;
  if (o.progress) {
    run.progress = [&o, run_start = Clock::now()](const std::string& msg) {
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "[%7.2fs] ",
                    std::chrono::duration<double>(Clock::now() - run_start).count());
      o.progress(stamp + msg);
    };
  }
  return run;
}

// Refuse to write NaN or Inf: an outputs file is read as a result. The trace (if any) is
// still written, since it shows the first stage that went non-finite.
void refuse_non_finite(const Prediction& p, const std::filesystem::path& out,
                       std::optional<Hdf5Tracer>& tracer) {
  std::vector<NamedOutput> checked = prediction_tensors(p);
  float max_pae = p.max_predicted_aligned_error, ptm = p.ptm_score;
  if (p.has_pae) {
    checked.push_back({"max_predicted_aligned_error", Tensor(&max_pae, DType::f32, Shape{})});
    checked.push_back({"ptm_score", Tensor(&ptm, DType::f32, Shape{})});
  }
  if (!non_finite_outputs(checked).empty()) {
    if (tracer) tracer->commit();
    require_finite_outputs(checked, out.string());
  }
}

void write_outputs(const EvaluateOptions& o, const Prediction& p, const std::string& preset) {
  Hdf5TensorWriter out(o.out);
  write_prediction_outputs(out, p);
  out.set_root_attribute("preset", preset);
  out.set_root_attribute("features", o.features.string());
  out.set_root_attribute("iterations", std::to_string(p.iterations));
  out.set_root_attribute("chunk_size", chunk_sizes_token(p.plan.chosen.chunks));
  out.commit();
}

EvaluateReport report_of(const Prediction& p) {
  EvaluateReport report;
  report.n_res = p.pair.dim(0);
  report.n_seq = p.msa.dim(0);
  report.iterations = p.iterations;
  report.planned_bytes = p.planned_bytes;
  report.predicted_peak_bytes = p.plan.dram_peak_bytes;
  report.chunks = p.plan.chosen.chunks;
  for (std::int64_t i = 0; i < p.plddt.numel(); ++i) report.mean_plddt += p.plddt.at<float>({i});
  report.mean_plddt /= static_cast<double>(std::max<std::int64_t>(p.plddt.numel(), 1));
  if (p.has_pae) report.ptm = p.ptm_score;
  return report;
}

}  // namespace

EvaluatePlan plan_evaluate(const EvaluateOptions& o) {
  const LoadedModel model = load_model(o.params, {.precision = o.precision});
  const ModelRunner& runner = *model.runner;
  const Hdf5TensorReader features(o.features);
  const FeatureSource source = file_source(features, model.config());
  const RunOptions run = run_options(o, source.iterations, nullptr);
  EvaluatePlan plan;
  plan.dims = runner.dims_of(source);
  plan.plan = runner.plan(plan.dims, source.bytes_per_iteration, run);
  return plan;
}

EvaluateReport evaluate(const EvaluateOptions& o) {
  const auto start = Clock::now();
  auto say = [&](const std::string& msg) {
    if (o.progress) o.progress(msg);
  };

  const Hdf5TensorReader features(o.features);
  say("loading " + o.params.filename().string());
  const LoadedModel model = load_model(o.params, {.precision = o.precision});
  const ModelRunner& runner = *model.runner;
  say("loaded " + model.weights.preset + " (" + std::to_string(model.config().parameter_count) +
      " parameters)");
  const WeightResidency weights = runner.weight_residency();
  say("weights: " + mib(weights.shared_bytes) + " mapped shared" +
      (runner.weight_cache_file().empty() ? "" : " from " + runner.weight_cache_file().string()) +
      ", " + mib(weights.private_bytes) + " private");

  const FeatureSource source = file_source(features, model.config());
  std::optional<Hdf5Tracer> tracer;
  if (!o.trace.empty()) tracer.emplace(o.trace);
  const Prediction p =
      runner.run(source, run_options(o, source.iterations, tracer ? &*tracer : nullptr));

  refuse_non_finite(p, o.out, tracer);
  write_outputs(o, p, model.weights.preset);
  if (tracer) tracer->commit();

  EvaluateReport report = report_of(p);
  report.weights = weights;
  report.weight_cache = runner.weight_cache_file();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report.peak_rss_bytes = os_peak_rss_bytes();
  say("wrote " + o.out.string() + "; peak RSS " + mib(report.peak_rss_bytes) + ", predicted " +
      mib(report.predicted_peak_bytes) + " (arenas " + mib(report.planned_bytes) + ")");
  return report;
}

}  // namespace cpufold
