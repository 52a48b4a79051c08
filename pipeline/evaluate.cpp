#include "pipeline/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "io/feature_file.h"
#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "memory/peak_tracker.h"
#include "pipeline/finite_outputs.h"
#include "pipeline/hdf5_tracer.h"
#include "pipeline/model_runner.h"
#include "pipeline/reference_features.h"

namespace cpufold {
namespace {

using Clock = std::chrono::steady_clock;

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

EvaluateReport evaluate(const EvaluateOptions& o) {
  const auto start = Clock::now();
  auto say = [&](const std::string& msg) {
    if (o.progress) o.progress(msg);
  };

  const WeightStore store = WeightStore::open(o.params);
  const ModelConfig config = ModelConfig::from_weights(store);
  const Hdf5TensorReader features(o.features);
  const std::int64_t available = feature_iterations(features);
  const std::string preset = config.preset_for_file(store.path().filename().string());
  say("loading " + preset + " (" + std::to_string(config.parameter_count) + " parameters)");
  const ModelRunner runner(store, config);
  const auto unused = store.unused_keys();
  if (!unused.empty()) {
    throw WeightsError(std::to_string(unused.size()) + " parameters in " + store.path().string() +
                       " are not used by the model, e.g. " + unused.front());
  }

  FeatureSource source;
  source.iterations = available;
  source.bytes_per_iteration = trunk_inputs_bytes(features, config.templates);
  source.read = [&](std::int64_t k, Arena& arena) {
    return read_trunk_inputs(features, k, config.templates, arena);
  };
  std::optional<Hdf5Tracer> tracer;
  if (!o.trace.empty()) tracer.emplace(o.trace);
  RunOptions run;
  run.recycles = o.recycles.value_or(available - 1);
  if (run.recycles < 0 || run.recycles + 1 > available) {
    throw InputError(o.features.string() + " holds features for " + std::to_string(available) +
                     " iteration(s); --recycles " + std::to_string(run.recycles) + " needs " +
                     std::to_string(run.recycles + 1));
  }
  run.early_stop_tolerance = o.early_stop_tolerance;
  run.chunk = o.chunk_size;
  run.tracer = tracer ? &*tracer : nullptr;
  if (o.progress) {
    run.progress = [&o, run_start = Clock::now()](const std::string& msg) {
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "[%7.2fs] ",
                    std::chrono::duration<double>(Clock::now() - run_start).count());
      o.progress(stamp + msg);
    };
  }
  const Prediction p = runner.run(source, run);

  const std::pair<const char*, const Tensor*> datasets[] = {
      {"msa", &p.msa},
      {"msa_first_row", &p.msa_first_row},
      {"pair", &p.pair},
      {"single", &p.single},
      {"final_atom_positions", &p.final_atom_positions},
      {"final_atom14_positions", &p.final_atom14_positions},
      {"final_atom_mask", &p.final_atom_mask},
      {"final_affine_tensor", &p.final_affine_tensor},
      {"final_rot_mats", &p.final_rot_mats},
      {"final_trans", &p.final_trans},
      {"lddt_logits", &p.lddt_logits},
      {"plddt", &p.plddt},
      {"distogram_logits", &p.distogram_logits},
      {"masked_msa_logits", &p.masked_msa_logits},
      {"experimentally_resolved_logits", &p.experimentally_resolved_logits},
      {"sm/frames", &p.sm.frames},
      {"sm/sidechain_frames", &p.sm.sidechain_frames},
      {"sm/angles", &p.sm.angles},
      {"sm/unnormalized_angles", &p.sm.unnormalized_angles},
      {"sm/positions", &p.sm.positions},
      {"sm/states", &p.sm.states},
      {"sm/single", &p.sm.single},
  };
  // Refuse to write NaN or Inf: an outputs file is read as a result. The trace (if any) is
  // still written, since it shows the first stage that went non-finite.
  float max_pae = p.max_predicted_aligned_error, ptm = p.ptm_score;
  std::vector<NamedOutput> checked;
  for (const auto& [name, tensor] : datasets) checked.push_back({name, *tensor});
  if (p.has_pae) {
    for (const auto& [name, tensor] :
         {std::pair{"tm_logits", p.tm_logits},
          std::pair{"aligned_confidence_probs", p.aligned_confidence_probs},
          std::pair{"predicted_aligned_error", p.predicted_aligned_error},
          std::pair{"max_predicted_aligned_error", Tensor(&max_pae, DType::f32, Shape{})},
          std::pair{"ptm_score", Tensor(&ptm, DType::f32, Shape{})}})
      checked.push_back({name, tensor});
  }
  if (!non_finite_outputs(checked).empty()) {
    if (tracer) tracer->commit();
    require_finite_outputs(checked, o.out.string());
  }

  Hdf5TensorWriter out(o.out);
  for (const auto& [name, tensor] : datasets) out.write(std::string("outputs/") + name, *tensor);
  if (p.has_pae) {
    out.write("outputs/tm_logits", p.tm_logits);
    out.write("outputs/aligned_confidence_probs", p.aligned_confidence_probs);
    out.write("outputs/predicted_aligned_error", p.predicted_aligned_error);
    out.write("outputs/max_predicted_aligned_error", Tensor(&max_pae, DType::f32, Shape{}));
    out.write("outputs/ptm_score", Tensor(&ptm, DType::f32, Shape{}));
  }
  // OpenFold's num_recycles counts every pass, the first included (the reference's too).
  std::int64_t num_recycles = p.iterations;
  out.write("outputs/num_recycles", Tensor(&num_recycles, DType::i64, Shape{}));
  out.set_root_attribute("preset", preset);
  out.set_root_attribute("features", o.features.string());
  out.set_root_attribute("iterations", std::to_string(p.iterations));
  out.set_root_attribute("chunk_size", std::to_string(o.chunk_size));
  out.commit();
  if (tracer) tracer->commit();

  EvaluateReport report;
  report.n_res = p.pair.dim(0);
  report.n_seq = p.msa.dim(0);
  report.iterations = p.iterations;
  report.planned_bytes = p.planned_bytes;
  for (std::int64_t i = 0; i < p.plddt.numel(); ++i) report.mean_plddt += p.plddt.at<float>({i});
  report.mean_plddt /= static_cast<double>(std::max<std::int64_t>(p.plddt.numel(), 1));
  if (p.has_pae) report.ptm = p.ptm_score;
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report.peak_rss_bytes = os_peak_rss_bytes();
  say("wrote " + o.out.string() + "; memory planned " + mib(report.planned_bytes) + ", peak RSS " +
      mib(report.peak_rss_bytes));
  return report;
}

}  // namespace cpufold
