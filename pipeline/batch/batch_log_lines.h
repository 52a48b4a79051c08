// The lines a `cpufold predict` batch says on stderr and in log.txt, as pure functions of what
// they report (the batch runner decides when; these decide the words).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/batch/timings_file.h"

namespace cpufold {

// "cpufold predict 0.4.0: 3 job(s) from in.fasta into out"
std::string batch_start_line(const std::string& version, std::size_t jobs,
                             const std::filesystem::path& input,
                             const std::filesystem::path& output_dir);

struct BatchSettings {
  std::string model_type;  // "alphafold2_ptm"
  std::vector<int> models;
  int num_seeds = 1;
  std::uint64_t random_seed = 0;
  std::int64_t num_recycle = 0;
  bool rank_by_ptm = false;
  bool models_stay_loaded = true;  // false: not every model fits in memory at once
};
// "alphafold2_ptm model_1, model_2; 1 seed(s) from 0; 3 recycle(s); ranked by mean pLDDT"
std::string batch_settings_line(const BatchSettings& s);

// "elapsed 1:02, ~0:30 left"; `left_seconds` < 0: nothing measured yet.
std::string eta_text(double elapsed_seconds, double left_seconds);

// "[2/5] name" and, with the query's length, "[2/5] name (120 aa)".
std::string job_head(std::size_t index, std::size_t count, const std::string& name);
std::string job_head_with_length(const std::string& head, std::size_t length);

// "[2/5] name (120 aa): start, elapsed 0:03, ~1:20 left"
std::string job_start_line(const std::string& head_with_length, const std::string& eta);
// "HEAD: MSA source msa_dir, 42 row(s) used after removing duplicates (query included)"
std::string msa_rows_line(const std::string& head, const std::string& source, std::int64_t rows);
// "[2/5] name: done in 1:02, elapsed 3:04, ~1:20 left"
std::string job_done_line(const std::string& head, double seconds, const std::string& eta);
// "[2/5] name: FAILED: why"
std::string job_failed_line(const std::string& head, const std::string& message);
// "  failed name: why" (under the summary)
std::string failed_job_line(const std::string& name, const std::string& message);

// A job's failure names the input record it comes from ("FILE:LINE: ..."; `line` 0: no line),
// unless the message already starts with that file (a parser's own location).
std::string located_in_input(const std::filesystem::path& source, std::size_t line,
                             const std::string& message);

// A job skipped because an earlier run finished it (its marker or zip exists).
std::string job_skipped_line(const std::string& head, const std::string& marker_name,
                             const std::string& zip_name);
// --stop-at-score cut the job short after `predictions` predictions.
std::string stop_at_score_line(const std::string& head, double stop_at_score,
                               std::size_t predictions);

struct ModelLoad {
  std::string model;  // "model_3"
  std::filesystem::path file;
  std::int64_t parameter_count = 0;
  double seconds = 0;
  std::size_t shared_bytes = 0, private_bytes = 0;  // the weights' residency
};
// "loaded model_1 from F (N parameters) in 1.2 s; weights 3.0 MiB mapped shared, 0.1 MiB private"
std::string model_loaded_line(const ModelLoad& load);

// "WHERE: done in 3.2 s (4 iteration(s)), pLDDT 71.3, pTM 0.612, peak RSS 80 MiB (predicted 75)"
// for a run of `seconds` (pTM when the record has one).
std::string run_done_line(const std::string& where, double seconds, const RunTiming& run);

// "HEAD: rank_001_TAG pLDDT=71.345 pTM=0.612"
std::string ranked_line(const std::string& head, std::size_t rank, const std::string& tag,
                        double mean_plddt, bool has_pae, double ptm);

// "summary: 2 done, 1 skipped (already done), 0 failed, in 1:02"
std::string batch_summary_line(std::size_t done, std::size_t skipped, std::size_t failed,
                               double seconds);

}  // namespace cpufold
