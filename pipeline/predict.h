// `cpufold predict`: the batch runner. Folds every job of INPUT with each selected model and
// seed, ranks the predictions and writes ColabFold's output files, each atomically, with the
// job's `.done.txt` marker last.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/params_directory.h"
#include "pipeline/predict_jobs.h"

namespace cpufold {

enum class RankBy { automatic, plddt, ptm };

// "auto", "plddt" or "ptm"; InputError otherwise.
RankBy parse_rank_by(const std::string& name);

struct PredictOptions {
  std::filesystem::path input;       // FASTA / A3M / CSV / TSV file or a directory of them
  std::filesystem::path output_dir;  // created when missing
  std::filesystem::path msa_dir;     // empty: only MSAs given with the input
  std::filesystem::path data_dir;    // holds params/params_model_N[_ptm].{h5,npz}
  int num_models = 5;
  std::vector<int> model_order{1, 2, 3, 4, 5};  // the first num_models are run
  ModelType model_type = ModelType::alphafold2_ptm;
  std::int64_t num_recycle = 3;
  double recycle_early_stop_tolerance = 0;  // Å of CA-distance change; <= 0: off
  int num_seeds = 1;
  std::uint64_t random_seed = 0;  // seeds random_seed .. random_seed + num_seeds - 1
  RankBy rank = RankBy::automatic;
  std::optional<std::int64_t> max_seq, max_extra_seq;  // default: AF2's per-model values
  std::int64_t chunk_size = 0;
  int threads = 0;  // recorded in config.json (the caller sets OpenMP)
  bool overwrite_existing_results = false;
  QueryOrder sort_queries_by = QueryOrder::length;
  std::function<void(const std::string&)> progress;  // one line per call; may be empty
};

struct JobOutcome {
  enum class Status { done, skipped, failed };
  std::string name;
  Status status = Status::failed;
  std::string message;         // why it failed or was skipped
  bool out_of_memory = false;  // failed for lack of memory (a BudgetError)
};

struct PredictSummary {
  std::vector<JobOutcome> jobs;
  std::size_t count(JobOutcome::Status status) const;
};

// Runs the batch. A job whose input is bad (or whose MSA does not match its query, or that
// does not fit the memory budget) fails alone, with its message in the summary, log.txt
// and on `progress`; the others still run. Errors that concern the whole batch (options,
// missing or bad parameter files, an unusable OUTPUT_DIR) throw.
PredictSummary predict(const PredictOptions& options);

}  // namespace cpufold
