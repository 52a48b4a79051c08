#include "pipeline/batch/predict.h"

#include <algorithm>
#include <set>

#include "io/atomic_file.h"
#include "memory/error.h"
#include "pipeline/batch/batch_progress.h"
#include "pipeline/batch/batch_runner.h"
#include "pipeline/batch/citations.h"
#include "pipeline/batch/config_json.h"
#include "pipeline/batch/instance_batch.h"
#include "pipeline/batch/job_order.h"
#include "pipeline/batch/job_search.h"
#include "pipeline/batch/job_templates.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/batch/output_dir_lock.h"
#include "pipeline/batch/predict_limits.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/runner/model_flops.h"
#include "pipeline/runner/model_loader.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// The options' ranges (as the command line checks them) for callers that skip the command line,
// and what no single option can say: the model order against --num-models, the MSA directory.
void check_options(const PredictOptions& o) {
  require_in_range(kNumModelsRange, o.num_models);
  std::set<int> seen;
  for (int m : o.model_order) {
    require_in_range(kModelNumberRange, m);
    if (!seen.insert(m).second) {
      throw InputError("--model-order names model " + std::to_string(m) + " twice");
    }
  }
  if (static_cast<std::size_t>(o.num_models) > o.model_order.size()) {
    throw InputError("--num-models " + std::to_string(o.num_models) + " needs as many models " +
                     "in --model-order, which lists " + std::to_string(o.model_order.size()));
  }
  require_in_range(kNumRecycleRange, o.num_recycle);
  require_in_range(kNumSeedsRange, o.num_seeds);
  require_in_range(kNumEnsembleRange, o.num_ensemble);
  if (o.max_seq) require_in_range(kMaxSeqRange, *o.max_seq);
  if (o.max_extra_seq) require_in_range(kMaxExtraSeqRange, *o.max_extra_seq);
  if (o.chunks) {
    for (const ChunkFamily f : kChunkFamilies) require_in_range(kChunkSizeRange, (*o.chunks)[f]);
  }
  if (!o.msa_dir.empty() && !fs::is_directory(o.msa_dir)) {
    throw InputError("--msa-dir " + o.msa_dir.string() + ": not a directory");
  }
}

// Keeps the shard's jobs. Costs are the jobs' FLOPs at AF2's full MSA depth: they depend on
// nothing but the input and the first model, so every shard and every rerun splits alike.
void take_shard(BatchInputs& in, const PredictOptions& o, const Shard& shard) {
  const ModelConfig config = open_model_weights(in.params.begin()->second).config;
  std::vector<double> costs;
  std::vector<std::string> names;
  for (const PredictJob& j : in.jobs.jobs) {
    const auto n = static_cast<std::int64_t>(j.sequence.size());
    costs.push_back(model_flops(config, {n, 512, 5120, config.templates ? 4 : 0},
                                (o.num_recycle + 1) * o.num_ensemble));
    names.push_back(j.name);
  }
  std::vector<PredictJob> mine;
  for (std::size_t i : shard_members(costs, names, shard)) mine.push_back(in.jobs.jobs[i]);
  in.jobs.warnings.push_back("shard " + std::to_string(shard.index) + "/" +
                             std::to_string(shard.count) + ": " + std::to_string(mine.size()) +
                             " of " + std::to_string(in.jobs.jobs.size()) + " job(s)");
  in.jobs.jobs = std::move(mine);
}

}  // namespace

fs::path job_logs_dir(const fs::path& output_dir) {
  return output_dir / "logs";
}

fs::path worker_log_path(const fs::path& output_dir, const std::string& job) {
  return job_logs_dir(output_dir) / (job + ".log.txt");
}

fs::path worker_timings_path(const fs::path& output_dir, const std::string& job) {
  return job_logs_dir(output_dir) / (job + ".timings.json");
}

fs::path search_log_path(const fs::path& output_dir, const std::string& job) {
  return job_logs_dir(output_dir) / ((job.empty() ? "" : job + ".") + "search.log.txt");
}

fs::path batch_log_path(const PredictOptions& o) {
  if (o.worker_search) return search_log_path(o.output_dir, o.worker_job);
  return o.worker_job.empty() ? o.output_dir / "log.txt"
                              : worker_log_path(o.output_dir, o.worker_job);
}

fs::path batch_timings_path(const PredictOptions& o) {
  return o.worker_job.empty() ? o.output_dir / "timings.json"
                              : worker_timings_path(o.output_dir, o.worker_job);
}

bool job_done_already(const PredictOptions& o, const std::string& job) {
  std::error_code ec;  // an unusable path is not a done job; running it reports why
  return !o.overwrite_existing_results && (fs::exists(done_marker(o.output_dir, job), ec) ||
                                           fs::exists(result_zip(o.output_dir, job), ec));
}

BatchInputs batch_inputs(const PredictOptions& o) {
  check_options(o);
  // Parameters first: a missing file stops the batch before any work (and names the path).
  BatchInputs in;
  for (int i = 0; i < o.num_models; ++i) {
    in.params[o.model_order[i]] = find_params(o.data_dir, o.model_order[i], o.model_type);
  }
  in.jobs = discover_jobs(o.input, o.sort_queries_by);
  // Before any model work (and before the shard split, so every shard refuses alike).
  require_msa_sources(in.jobs.jobs, msa_sources(o));
  check_template_options(o);  // after the input, which is reported first
  check_search_options(o);
  reorder_jobs(in.jobs.jobs, o.sort_queries_by, o.random_seed);
  apply_jobname_prefix(in.jobs.jobs, o.jobname_prefix);
  if (!o.worker_job.empty()) {
    // A search worker of the whole batch (no --worker-job) takes the shard below, as its parent.
    std::erase_if(in.jobs.jobs, [&](const PredictJob& j) { return j.name != o.worker_job; });
    if (in.jobs.jobs.empty()) throw InputError("--worker-job " + o.worker_job + ": no such job");
    in.jobs.warnings.clear();  // the parent logged them
    return in;
  }
  const std::optional<Shard> shard = o.shard ? o.shard : slurm_array_shard();
  if (shard && shard->count > 1) take_shard(in, o, *shard);
  return in;
}

void PredictSummary::add(JobOutcome outcome) {
  ++counts_[static_cast<std::size_t>(outcome.status)];
  if (outcome.status == JobOutcome::Status::failed) failures.push_back(std::move(outcome));
}

std::size_t PredictSummary::count(JobOutcome::Status status) const {
  return counts_[static_cast<std::size_t>(status)];
}

std::size_t PredictSummary::total() const {
  std::size_t n = 0;
  for (const std::size_t c : counts_) n += c;
  return n;
}

namespace {

// The ranking and, when --rank ptm cannot be honoured, why.
std::pair<RankBy, std::string> effective_rank(const PredictOptions& o) {
  const RankBy rank = o.rank == RankBy::automatic ? RankBy::plddt : o.rank;
  if (rank == RankBy::ptm && o.model_type != ModelType::alphafold2_ptm) {
    return {RankBy::plddt, "--rank ptm needs --model-type alphafold2_ptm: ranking by mean pLDDT"};
  }
  return {rank, ""};
}

// A --instances search task (--worker-search): the job's search, or every job's, and with
// --templates their template search too, so that the fold finds the hits kept. Its parent holds
// the batch's lock and reads its exit status and log.
PredictSummary run_search_worker(const PredictOptions& o, const std::vector<PredictJob>& jobs) {
  std::error_code ec;
  fs::create_directories(batch_log_path(o).parent_path(), ec);
  const auto say = [&](const std::string& line) { append_log_line(batch_log_path(o), line); };
  const std::set<std::string> to_search = jobs_to_search(o, jobs);
  search_job_msas(o, jobs, say);
  PredictSummary summary;
  for (const PredictJob& job : jobs) {
    if (o.templates && to_search.contains(job.name)) {
      search_job_template_hits(job, o,
                               [&](const std::string& line) { say(job.name + ": " + line); });
    }
    summary.add({job.name, JobOutcome::Status::done, "", false});
  }
  return summary;
}

PredictSummary run_batch(const PredictOptions& o) {
  auto [params, jobs] = batch_inputs(o);

  std::error_code ec;
  fs::create_directories(o.output_dir, ec);
  if (!fs::is_directory(o.output_dir)) {
    throw InputError(o.output_dir.string() + ": cannot create the output directory" +
                     (ec ? " (" + ec.message() + ")" : ""));
  }
  if (o.worker_search) return run_search_worker(o, jobs.jobs);
  if (!o.worker_job.empty()) {
    fs::create_directories(batch_log_path(o).parent_path(), ec);
    return run_jobs(o, std::move(jobs.jobs), effective_rank(o).first, std::move(params), {});
  }
  const auto [rank, rank_note] = effective_rank(o);
  const OutputDirLock lock(o.output_dir, output_settings_json(o, rank));
  const std::size_t stale = remove_stale_temporaries(o.output_dir);

  write_file_atomically(o.output_dir / "config.json", config_json(o, rank, jobs.jobs.size()));
  const bool used_msas = !o.msa_dir.empty() || !o.databases.empty() ||
                         std::any_of(jobs.jobs.begin(), jobs.jobs.end(),
                                     [](const PredictJob& j) { return !j.a3m.empty(); });
  write_file_atomically(o.output_dir / "cite.bibtex", cite_bibtex(used_msas));

  if (stale > 0) {
    jobs.warnings.push_back("removed " + std::to_string(stale) +
                            " temporary file(s) left by an interrupted run");
  }
  if (!rank_note.empty()) jobs.warnings.push_back(rank_note);
  if (o.num_relax > 0) {
    jobs.warnings.push_back(
        "--amber / --num-relax " + std::to_string(o.num_relax) +
        ": cpufold has no Amber relaxation; every structure is written unrelaxed "
        "(JOB_unrelaxed_rank_K_TAG.pdb, as ColabFold names them), no JOB_relaxed_* files");
  }
  // --instances schedules each search as a task beside the other jobs' folds.
  if (wants_instances(o))
    return run_instances(o, std::move(jobs.jobs), rank, std::move(params), jobs.warnings);
  // One process: run_jobs searches every job before any fold, on all its threads.
  return run_jobs(o, std::move(jobs.jobs), rank, std::move(params), jobs.warnings);
}

}  // namespace

PredictSummary predict(const PredictOptions& o) {
  try {
    return run_batch(o);
  } catch (const std::exception& e) {
    // A batch that stops leaves its reason beside the progress lines, not only on stderr.
    std::error_code ec;
    if (fs::is_directory(o.output_dir, ec)) {
      append_log_line(batch_log_path(o), std::string("error: ") + e.what());
    }
    throw;
  }
}

}  // namespace cpufold
