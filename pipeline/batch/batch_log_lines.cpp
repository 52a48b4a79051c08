#include "pipeline/batch/batch_log_lines.h"

#include <cstdio>

#include "pipeline/batch/batch_progress.h"
#include "pipeline/output/job_outputs.h"

namespace cpufold {
namespace {

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

}  // namespace

std::string batch_start_line(const std::string& version, std::size_t jobs,
                             const std::filesystem::path& input,
                             const std::filesystem::path& output_dir) {
  return "cpufold predict " + version + ": " + std::to_string(jobs) + " job(s) from " +
         input.string() + " into " + output_dir.string();
}

std::string batch_settings_line(const BatchSettings& s) {
  std::string models;
  for (int m : s.models) models += (models.empty() ? "model_" : ", model_") + std::to_string(m);
  return s.model_type + " " + models + "; " + std::to_string(s.num_seeds) + " seed(s) from " +
         std::to_string(s.random_seed) + "; " + std::to_string(s.num_recycle) +
         " recycle(s); ranked by " + (s.rank_by_ptm ? "pTM" : "mean pLDDT") +
         (s.models_stay_loaded ? ""
                               : "; not enough memory to keep every model loaded: "
                                 "weights are reloaded per job");
}

std::string eta_text(double elapsed_seconds, double left_seconds) {
  return "elapsed " + clock_time(elapsed_seconds) +
         (left_seconds < 0 ? ", estimating time left" : ", ~" + clock_time(left_seconds) + " left");
}

std::string job_head(std::size_t index, std::size_t count, const std::string& name) {
  std::string head = "[";
  head += std::to_string(index + 1);
  return head + "/" + std::to_string(count) + "] " + name;
}

std::string job_head_with_length(const std::string& head, std::size_t length) {
  return head + " (" + std::to_string(length) + " aa)";
}

std::string job_start_line(const std::string& head_with_length, const std::string& eta) {
  return head_with_length + ": start, " + eta;
}

std::string msa_rows_line(const std::string& head, const std::string& source, std::int64_t rows) {
  return head + ": MSA source " + source + ", " + std::to_string(rows) +
         " row(s) used after removing duplicates (query included)";
}

std::string job_done_line(const std::string& head, double seconds, const std::string& eta) {
  return head + ": done in " + clock_time(seconds) + ", " + eta;
}

std::string job_failed_line(const std::string& head, const std::string& message) {
  return head + ": FAILED: " + message;
}

std::string failed_job_line(const std::string& name, const std::string& message) {
  return "  failed " + name + ": " + message;
}

std::string located_in_input(const std::filesystem::path& source, std::size_t line,
                             const std::string& message) {
  std::string located = source.string();
  if (message.rfind(located, 0) == 0) return message;
  if (line > 0) {
    located += ':';
    located += std::to_string(line);
  }
  return located + ": " + message;
}

std::string job_skipped_line(const std::string& head, const std::string& marker_name,
                             const std::string& zip_name) {
  return head + ": skipped, already done (" + marker_name + " or " + zip_name +
         " exists; --overwrite-existing-results redoes it)";
}

std::string stop_at_score_line(const std::string& head, double stop_at_score,
                               std::size_t predictions) {
  return head + ": --stop-at-score " + fixed(stop_at_score, 2) +
         " reached: " + std::to_string(predictions) + " prediction(s), the others skipped";
}

std::string model_loaded_line(const ModelLoad& load) {
  const auto mib = [](std::size_t bytes) {
    return fixed(static_cast<double>(bytes) / (1 << 20), 1) + " MiB";
  };
  return "loaded " + load.model + " from " + load.file.string() + " (" +
         std::to_string(load.parameter_count) + " parameters) in " + fixed(load.seconds, 1) +
         " s; weights " + mib(load.shared_bytes) + " mapped shared, " + mib(load.private_bytes) +
         " private";
}

std::string run_done_line(const std::string& where, double seconds, const RunTiming& run) {
  std::string line = where + ": done in " + fixed(seconds, 1) + " s (" +
                     std::to_string(run.iterations) + " iteration(s)), pLDDT " +
                     fixed(run.mean_plddt, 1);
  if (run.ptm) line += ", pTM " + fixed(*run.ptm, 3);
  return line + ", peak RSS " + std::to_string(run.peak_rss_bytes >> 20) + " MiB (predicted " +
         std::to_string(run.predicted_peak_bytes >> 20) + ")";
}

std::string ranked_line(const std::string& head, std::size_t rank, const std::string& tag,
                        double mean_plddt, bool has_pae, double ptm) {
  std::string line = head + ": " + rank_tag(rank) + "_" + tag + " pLDDT=" + fixed(mean_plddt, 3);
  if (has_pae) line += " pTM=" + fixed(ptm, 3);
  return line;
}

std::string batch_summary_line(std::size_t done, std::size_t skipped, std::size_t failed,
                               double seconds) {
  return "summary: " + std::to_string(done) + " done, " + std::to_string(skipped) +
         " skipped (already done), " + std::to_string(failed) + " failed, in " +
         clock_time(seconds);
}

}  // namespace cpufold
