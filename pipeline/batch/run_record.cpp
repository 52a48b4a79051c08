#include "pipeline/batch/run_record.h"

namespace cpufold {

RunTiming run_timing(const ModelRunInfo& run, const Prediction& p, const RenderedPrediction& r) {
  RunTiming t;
  t.model = run.model;
  t.seed = run.seed;
  t.load_seconds = run.load_seconds;
  t.feature_seconds = run.feature_seconds;
  t.model_seconds = p.timings;
  t.iterations = p.iterations;
  t.n_seq = run.n_seq;
  t.n_extra = run.n_extra;
  t.mean_plddt = r.mean_plddt;
  if (p.has_pae) t.ptm = r.ptm;
  t.planned_bytes = p.planned_bytes;
  t.peak_rss_bytes = p.peak_rss_bytes;
  t.predicted_peak_bytes = p.plan.dram_peak_bytes;
  t.chunk = p.plan.chosen.chunk;
  return t;
}

RunSummary run_summary(double seconds, const Prediction& p, const RenderedPrediction& r) {
  RunSummary s;
  s.seconds = seconds;
  s.iterations = p.iterations;
  s.mean_plddt = r.mean_plddt;
  s.has_pae = p.has_pae;
  s.ptm = r.ptm;
  s.peak_rss_bytes = p.peak_rss_bytes;
  s.predicted_peak_bytes = p.plan.dram_peak_bytes;
  return s;
}

}  // namespace cpufold
