#include "pipeline/evaluate.h"

#include <chrono>
#include <cstdio>

#include "evoformer/trunk.h"
#include "io/feature_file.h"
#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "memory/peak_tracker.h"
#include "pipeline/hdf5_tracer.h"
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
    if (!o.progress) return;
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%7.2fs] ", t);
    o.progress(stamp + msg);
  };

  const WeightStore store = WeightStore::open(o.params);
  const ModelConfig config = ModelConfig::from_weights(store);
  const Hdf5TensorReader features(o.features);
  const std::int64_t available = feature_iterations(features);
  const std::int64_t recycles = o.recycles.value_or(available - 1);
  if (recycles < 0) throw InputError("--recycles must be >= 0");
  if (recycles + 1 > available) {
    throw InputError(o.features.string() + " holds features for " + std::to_string(available) +
                     " iteration(s); --recycles " + std::to_string(recycles) + " needs " +
                     std::to_string(recycles + 1));
  }
  if (recycles > 0) {
    throw InputError(
        "--recycles " + std::to_string(recycles) +
        ": recycling feeds back the structure module's positions, and the structure module is "
        "not implemented yet; run with --recycles 0");
  }
  say("loaded " + config.preset_for_file(store.path().filename().string()) + " parameters (" +
      std::to_string(config.parameter_count) + ")");

  const Trunk trunk(store, config);
  say("model ready");

  // Arenas sized from the model and the feature shapes before anything runs.
  Arena inputs_arena("features", dram_tier(), trunk_inputs_bytes(features, config.templates));
  const TrunkInputs first = read_trunk_inputs(features, 0, config.templates, inputs_arena);
  const TrunkDims dims = Trunk::dims_of(first, config);
  Arena state_arena("trunk-state", dram_tier(), trunk.state_bytes(dims));
  Arena scratch("scratch", dram_tier(), trunk.scratch_bytes(dims, o.chunk_size));
  EvaluateReport report{dims.n_res,
                        dims.n_seq,
                        dims.n_extra,
                        dims.n_templ,
                        recycles + 1,
                        0,
                        inputs_arena.capacity() + state_arena.capacity() + scratch.capacity(),
                        0};
  say("N_res " + std::to_string(dims.n_res) + ", " + std::to_string(dims.n_seq) + " MSA rows, " +
      std::to_string(dims.n_extra) + " extra rows, " + std::to_string(dims.n_templ) +
      " templates; activations planned at " + mib(report.planned_bytes));

  std::optional<Hdf5Tracer> tracer;
  if (!o.trace.empty()) tracer.emplace(o.trace);
  TrunkState state = trunk.allocate_state(dims, state_arena);
  RunContext ctx{&scratch, o.chunk_size, tracer ? &*tracer : nullptr, 0};
  trunk.forward(first, state, ctx);
  say("trunk done");

  Hdf5TensorWriter out(o.out);
  out.write("outputs/msa", state.msa.slice(0, 0, dims.n_seq));
  out.write("outputs/pair", state.pair);
  out.write("outputs/single", state.single);
  out.write("outputs/msa_first_row", state.msa_first_row);
  out.set_root_attribute("preset", config.preset_for_file(store.path().filename().string()));
  out.set_root_attribute("features", o.features.string());
  out.set_root_attribute("recycles", std::to_string(recycles));
  out.set_root_attribute("chunk_size", std::to_string(o.chunk_size));
  out.commit();
  if (tracer) tracer->commit();

  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report.peak_rss_bytes = os_peak_rss_bytes();
  say("wrote " + o.out.string() + "; scratch high-water " + mib(scratch.high_water()) + " of " +
      mib(scratch.capacity()) + ", peak RSS " + mib(report.peak_rss_bytes));
  return report;
}

}  // namespace cpufold
