#include "pipeline/runner/length_profile.h"

#include <algorithm>

#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/profile_blocks.h"
#include "pipeline/runner/synthetic_features.h"

namespace cpufold {
namespace {

double ratio_of(std::size_t measured, std::size_t predicted) {
  if (predicted == 0 || measured == 0) return 0;
  return static_cast<double>(measured) / static_cast<double>(predicted);
}

void record_plan(LengthProfile& p, const MemoryPlan& plan) {
  p.planned = true;
  p.chunks = plan.chosen.chunks;
  p.plan_peak_bytes = plan.dram_peak_bytes;
  p.blocks = plan.chosen.blocks;
  if (!p.blocks_only) p.predicted_peak_bytes = plan.dram_peak_bytes;
}

// The block the row stands for: the one predicted the larger.
const ProfiledBlock* peak_block(const LengthProfile& p) {
  const auto it = std::max_element(p.block_runs.begin(), p.block_runs.end(),
                                   [](const ProfiledBlock& a, const ProfiledBlock& b) {
                                     return a.predicted.total() < b.predicted.total();
                                   });
  return it == p.block_runs.end() ? nullptr : &*it;
}

}  // namespace

std::string profile_block_title(const std::string& name) {
  return name == "extra_msa" ? "extra-MSA block" : name == "evoformer" ? "Evoformer block" : name;
}

std::string profile_block_stage(const std::string& name) {
  return name + "_block";
}

double ProfiledBlock::ratio() const {
  return ran ? ratio_of(measured_peak_bytes, predicted.total()) : 0;
}

double LengthProfile::ratio() const {
  return ratio_of(measured_peak_bytes, predicted_peak_bytes);
}

const StagePeak* LengthProfile::stage(const std::string& name) const {
  for (const StagePeak& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ProfiledBlock* LengthProfile::block_run(const std::string& name) const {
  for (const ProfiledBlock& b : block_runs) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

LengthProfile profile_length(const ProfileRequest& r,
                             const std::function<void(const LengthProfile&)>& on_plan,
                             const std::function<void(const ProfiledBlock&)>& on_block) {
  StageMeter meter;
  const ProfileSizes& z = r.sizes;
  LengthProfile p;
  p.sizes = z;
  p.blocks_only = r.blocks_only;
  p.stage_method = StageMeter::method_name(meter.method());

  meter.begin("load");
  const LoadedModel model =
      load_model(r.params, {.precision = r.precision, .templates = z.templates});
  const ModelRunner& runner = *model.runner;
  // A run has read every weight by its peak; a lone block would read only its own.
  if (r.blocks_only) runner.make_weights_resident();
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
  record_plan(p, plan);
  if (r.blocks_only) {
    p.block_runs = plan_profile_blocks(runner, z, plan.chosen.chunks);
    p.predicted_peak_bytes = peak_block(p)->predicted.total();
  }
  if (on_plan) on_plan(p);

  if (r.blocks_only) {
    meter.end();
    // As the run would refuse it (run_memory.cpp): the plan's chunks are what the blocks take.
    if (r.mem_budget && !plan.fits)
      refuse_plan(plan, "this run (N_res " + std::to_string(z.n_res) + ")");
    run_profile_blocks(runner, z.n_res, p.block_runs, r.mem_budget, meter, on_block);
    p.measured_peak_bytes = peak_block(p)->measured_peak_bytes;
  } else {
    const Prediction prediction = runner.run(source, options);
    // The run plans again with what is resident then; that is the plan it followed.
    record_plan(p, prediction.plan);
    p.measured_peak_bytes = meter.peak_bytes();
  }
  p.stages = meter.stages();
  p.ok = true;
  return p;
}

}  // namespace cpufold
