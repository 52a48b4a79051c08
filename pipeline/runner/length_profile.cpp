#include "pipeline/runner/length_profile.h"

#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/synthetic_features.h"

namespace cpufold {

double LengthProfile::ratio() const {
  if (predicted_peak_bytes == 0 || measured_peak_bytes == 0) return 0;
  return static_cast<double>(measured_peak_bytes) / static_cast<double>(predicted_peak_bytes);
}

const StagePeak* LengthProfile::stage(const std::string& name) const {
  for (const StagePeak& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

LengthProfile profile_length(const ProfileRequest& r,
                             const std::function<void(const LengthProfile&)>& on_plan) {
  StageMeter meter;
  const ProfileSizes& z = r.sizes;
  LengthProfile p;
  p.sizes = z;
  p.stage_method = StageMeter::method_name(meter.method());

  meter.begin("load");
  const LoadedModel model =
      load_model(r.params, {.precision = r.precision, .templates = z.templates});
  const ModelRunner& runner = *model.runner;
  const FeatureSource source =
      synthetic_feature_source({z.n_res, z.msa_rows, z.extra_rows, z.templates, z.recycles + 1});

  RunOptions options;
  static_cast<SharedRunOptions&>(options) = r;
  options.recycles = z.recycles;
  options.on_stage = [&meter](std::string_view stage) {
    if (stage == "done") {
      meter.end();
    } else {
      meter.begin(stage);
    }
  };
  // The sizes are known: planning need not generate a sample.
  const TrunkDims dims{z.n_res, z.msa_rows, z.extra_rows, z.templates};
  const MemoryPlan plan = runner.plan(dims, source.bytes_per_iteration, options);
  p.planned = true;
  p.chunks = plan.chosen.chunks;
  p.predicted_peak_bytes = plan.dram_peak_bytes;
  p.blocks = plan.chosen.blocks;
  if (on_plan) on_plan(p);

  const Prediction prediction = runner.run(source, options);
  // The run plans again with what is resident then; that is the plan it followed.
  p.chunks = prediction.plan.chosen.chunks;
  p.predicted_peak_bytes = prediction.plan.dram_peak_bytes;
  p.blocks = prediction.plan.chosen.blocks;
  p.stages = meter.stages();
  p.measured_peak_bytes = meter.peak_bytes();
  p.ok = true;
  return p;
}

}  // namespace cpufold
