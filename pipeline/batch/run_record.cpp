#include "pipeline/batch/run_record.h"

namespace cpufold {

RunTiming run_timing(RunTiming run, const Prediction& p, const RenderedPrediction& r) {
  run.model_seconds = p.timings;
  run.iterations = p.iterations;
  run.mean_plddt = r.mean_plddt;
  if (p.has_pae) run.ptm = r.ptm;
  run.planned_bytes = p.planned_bytes;
  run.peak_rss_bytes = p.peak_rss_bytes;
  run.predicted_peak_bytes = p.plan.dram_peak_bytes;
  run.chunks = p.plan.chosen.chunks;
  return run;
}

}  // namespace cpufold
