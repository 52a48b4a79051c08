// `cpufold predict`: the batch runner. Folds every job of INPUT with each selected model and
// seed, ranks the predictions and writes ColabFold's output files, each atomically, with the
// job's `.done.txt` marker last.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memory/dtype.h"
#include "pipeline/batch/job_shards.h"
#include "pipeline/batch/predict_jobs.h"
#include "pipeline/batch/ranking.h"
#include "pipeline/runner/params_directory.h"
#include "pipeline/runner/shared_run_options.h"

namespace cpufold {

// The shared options (chunks, budget, spill, precision, threads) and predict's own.
struct PredictOptions : SharedRunOptions {
  std::filesystem::path input;       // FASTA / A3M / CSV / TSV file or a directory of them
  std::filesystem::path output_dir;  // created when missing
  std::filesystem::path msa_dir;     // empty: only MSAs given with the input
  // --msa-mode single_sequence: a job without an MSA (no A3M input, none in msa_dir) folds from
  // the query alone; otherwise such a job is refused (pipeline/batch/msa_source.h).
  bool single_sequence = false;
  int num_relax = 0;  // --num-relax / --amber: accepted, no relaxation (one warning per batch)
  std::filesystem::path data_dir;  // holds params/params_model_N[_ptm].{h5,npz}
  int num_models = 5;
  std::vector<int> model_order{1, 2, 3, 4, 5};  // the first num_models are run
  ModelType model_type = ModelType::alphafold2_ptm;
  std::int64_t num_recycle = 3;
  std::int64_t num_ensemble = 1;            // AF2 ensembling: trunk passes per iteration, averaged
  double recycle_early_stop_tolerance = 0;  // Å of CA-distance change; <= 0: off
  int num_seeds = 1;
  std::uint64_t random_seed = 0;  // seeds random_seed .. random_seed + num_seeds - 1
  RankBy rank = RankBy::automatic;
  std::optional<std::int64_t> max_seq, max_extra_seq;  // default: AF2's per-model values
  bool overwrite_existing_results = false;
  QueryOrder sort_queries_by = QueryOrder::length;
  // colabfold_batch output options (pipeline/colabfold_options.h).
  double stop_at_score = 100;  // skip the rest of a job once its ranking score exceeds this
  std::string jobname_prefix;  // non-empty: jobs are PREFIX_0, PREFIX_1, ... in run order
  bool save_all = false;       // every model output in JOB_all_rank_K_TAG.h5
  bool save_recycles = false;  // JOB_unrelaxed_rank_K_TAG.rR.pdb per recycle
  bool save_single_representations = false;  // JOB_single_repr_rank_K_TAG.npy
  bool save_pair_representations = false;    // JOB_pair_repr_rank_K_TAG.npy
  bool zip = false;                          // JOB.result.zip instead of the job's files
  bool skip_msa = false, skip_plots = false, skip_pae_json = false;  // --skip-output
  // --databases DIR: the jobs without an MSA are searched there with --search-method
  // (pipeline/batch/job_search.h) before any is folded; the MSAs are kept in OUTPUT_DIR/msas/.
  std::filesystem::path databases;
  std::string search_method = "jackhmmer";
  // With --instances, each search is a task of the scheduler on one instance's cores, counted as
  // this much memory beside the folds (--search-memory); a job's fold waits only on its search.
  std::size_t search_memory = std::size_t{4} << 30;
  // A --instances worker's job: the seconds its search took in the batch (for timings.json),
  // from the hidden --job-search-seconds. A batch keeps its own searches' times itself.
  std::map<std::string, double> search_seconds;
  // Templates (pipeline/batch/job_templates.h): fed to the models that use them (1 and 2).
  bool templates = false;
  std::filesystem::path template_db;           // AF2 data dir: pdb_seqres/, pdb_mmcif/mmcif_files/
  std::filesystem::path custom_template_path;  // mmCIF files searched instead of the PDB
  std::string max_template_date = "2100-01-01";      // YYYY-MM-DD; later templates are skipped
  std::function<void(const std::string&)> progress;  // one line per call; may be empty
  // Several instances (pipeline/batch/instance_batch.h). 0: chosen by the time model, or one
  // instance when only --threads is given (the command line's default); 1: this process.
  int instances = 1;
  int threads_per_instance = 0;
  std::optional<Shard> shard;  // --shard I/N, or a Slurm array task's share
  std::string worker_job;      // this process is a worker: it folds only that job
  bool worker_search = false;  // ... or searches it (every job to search when worker_job is empty)
};

// OUTPUT_DIR/logs: each job's own log and timings record, its finished runs while it is not
// done, and the batch's lock.
std::filesystem::path job_logs_dir(const std::filesystem::path& output_dir);
// Where a batch keeps its log and timings: OUTPUT_DIR/log.txt and timings.json, or for a
// worker OUTPUT_DIR/logs/JOB.log.txt and JOB.timings.json (a search worker: search_log_path).
std::filesystem::path batch_log_path(const PredictOptions& o);
// A --instances search task's log: OUTPUT_DIR/logs/JOB.search.log.txt, or search.log.txt for the
// task that searches every job at once (mmseqs2).
std::filesystem::path search_log_path(const std::filesystem::path& output_dir,
                                      const std::string& job);
std::filesystem::path batch_timings_path(const PredictOptions& o);
std::filesystem::path worker_log_path(const std::filesystem::path& output_dir,
                                      const std::string& job);
std::filesystem::path worker_timings_path(const std::filesystem::path& output_dir,
                                          const std::string& job);

struct JobOutcome {
  enum class Status { done, skipped, failed, interrupted };
  std::string name;
  Status status = Status::failed;
  std::string message;          // why it failed or was skipped
  bool out_of_memory = false;   // failed for lack of memory (a BudgetError)
  bool program_failed = false;  // its search program failed (an ExternalProgramError)
};

// The jobs of a batch by status, and the failed ones in full: what the summary line and the
// failed-job list need, and no more per job (a batch of 10,000 jobs keeps its memory flat).
struct PredictSummary {
  std::vector<JobOutcome> failures;  // the failed jobs, in batch order
  int stopped_by_signal = 0;         // SIGINT / SIGTERM stopped a multi-instance batch
  void add(JobOutcome outcome);
  std::size_t count(JobOutcome::Status status) const;
  std::size_t total() const;

 private:
  std::array<std::size_t, 4> counts_{};
};

// Runs the batch. A job whose input is bad (or whose MSA does not match its query, or that
// does not fit the memory budget) fails alone, with its message in the summary, log.txt
// and on `progress`; the others still run. Errors that concern the whole batch (options,
// missing or bad parameter files, an unusable OUTPUT_DIR) throw; when OUTPUT_DIR exists, the
// error is appended to its log.txt first.
PredictSummary predict(const PredictOptions& options);

// Whether an earlier run finished `job` in o.output_dir (its done marker, or with --zip its
// result.zip) and --overwrite-existing-results is off.
bool job_done_already(const PredictOptions& o, const std::string& job);

// What a batch works on, in predict's order, after the checks predict() makes before any work:
// each selected model's parameter file (a missing one throws, naming the path) and the jobs: for
// a worker only its job; with a shard (o.shard, or a Slurm array task's) only the shard's jobs.
struct BatchInputs {
  std::map<int, std::filesystem::path> params;
  JobList jobs;
};
BatchInputs batch_inputs(const PredictOptions& options);

}  // namespace cpufold
