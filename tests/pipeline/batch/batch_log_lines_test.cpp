// The words of a predict batch's log: each line from what it reports.
#include "pipeline/batch/batch_log_lines.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

TEST(BatchLogLinesTest, StartAndSettingsLines) {
  EXPECT_EQ(batch_start_line("0.4.0", 3, "in.fasta", "out"),
            "cpufold predict 0.4.0: 3 job(s) from in.fasta into out");
  BatchSettings s{"alphafold2_ptm", {3, 1}, 2, 7, 3, false, true};
  EXPECT_EQ(
      batch_settings_line(s),
      "alphafold2_ptm model_3, model_1; 2 seed(s) from 7; 3 recycle(s); ranked by mean pLDDT");
  s.rank_by_ptm = true;
  s.models_stay_loaded = false;
  EXPECT_EQ(batch_settings_line(s),
            "alphafold2_ptm model_3, model_1; 2 seed(s) from 7; 3 recycle(s); ranked by pTM; "
            "not enough memory to keep every model loaded: weights are reloaded per job");
}

TEST(BatchLogLinesTest, TimeLeftOnlyOnceMeasured) {
  EXPECT_EQ(eta_text(62, -1), "elapsed 1:02, estimating time left");
  EXPECT_EQ(eta_text(62, 30), "elapsed 1:02, ~0:30 left");
}

TEST(BatchLogLinesTest, JobLines) {
  const std::string head = job_head(1, 5, "q");
  EXPECT_EQ(head, "[2/5] q");
  const std::string with_length = job_head_with_length(head, 120);
  EXPECT_EQ(with_length, "[2/5] q (120 aa)");
  EXPECT_EQ(job_start_line(with_length, "E"), "[2/5] q (120 aa): start, E");
  EXPECT_EQ(msa_rows_line(with_length, "msa_dir", 42),
            "[2/5] q (120 aa): MSA source msa_dir, 42 row(s) used after removing duplicates "
            "(query included)");
  EXPECT_EQ(job_done_line(head, 62, "E"), "[2/5] q: done in 1:02, E");
  EXPECT_EQ(job_failed_line(head, "why"), "[2/5] q: FAILED: why");
  EXPECT_EQ(failed_job_line("q", "why"), "  failed q: why");
  EXPECT_EQ(job_skipped_line(head, "q.done.txt", "q.result.zip"),
            "[2/5] q: skipped, already done (q.done.txt or q.result.zip exists; "
            "--overwrite-existing-results redoes it)");
  EXPECT_EQ(stop_at_score_line(head, 70, 2),
            "[2/5] q: --stop-at-score 70.00 reached: 2 prediction(s), the others skipped");
}

TEST(BatchLogLinesTest, FailureNamesItsInputRecordOnce) {
  EXPECT_EQ(located_in_input("in.csv", 3, "bad residue"), "in.csv:3: bad residue");
  EXPECT_EQ(located_in_input("in.a3m", 0, "bad residue"), "in.a3m: bad residue");
  EXPECT_EQ(located_in_input("in.a3m", 4, "in.a3m:9: bad row"), "in.a3m:9: bad row");
}

TEST(BatchLogLinesTest, ModelLoadedLine) {
  const ModelLoad load{"model_1", "/p/params_model_1.h5", 1234, 1.26, 3 << 20, 1 << 19};
  EXPECT_EQ(model_loaded_line(load),
            "loaded model_1 from /p/params_model_1.h5 (1234 parameters) in 1.3 s; weights "
            "3.0 MiB mapped shared, 0.5 MiB private");
}

TEST(BatchLogLinesTest, RunDoneLineHasPtmOnlyWithPae) {
  RunTiming run;
  run.iterations = 4;
  run.mean_plddt = 71.34;
  run.peak_rss_bytes = std::size_t{80} << 20;
  run.predicted_peak_bytes = std::size_t{75} << 20;
  EXPECT_EQ(run_done_line("W", 3.25, run),
            "W: done in 3.2 s (4 iteration(s)), pLDDT 71.3, peak RSS 80 MiB (predicted 75)");
  run.ptm = 0.6125;
  EXPECT_EQ(run_done_line("W", 3.25, run),
            "W: done in 3.2 s (4 iteration(s)), pLDDT 71.3, pTM 0.613, "
            "peak RSS 80 MiB (predicted 75)");
}

TEST(BatchLogLinesTest, RankedAndSummaryLines) {
  EXPECT_EQ(ranked_line("H", 1, "T", 71.3456, false, 0), "H: rank_001_T pLDDT=71.346");
  EXPECT_EQ(ranked_line("H", 2, "T", 71.3456, true, 0.61249),
            "H: rank_002_T pLDDT=71.346 pTM=0.612");
  EXPECT_EQ(batch_summary_line(2, 1, 0, 62),
            "summary: 2 done, 1 skipped (already done), 0 failed, in 1:02");
}

}  // namespace
}  // namespace cpufold
