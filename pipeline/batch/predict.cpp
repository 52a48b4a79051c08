#include "pipeline/batch/predict.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <set>

#include "io/atomic_file.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "memory/out_of_memory.h"
#include "pipeline/batch/batch_progress.h"
#include "pipeline/batch/citations.h"
#include "pipeline/batch/config_json.h"
#include "pipeline/batch/job_a3m.h"
#include "pipeline/batch/job_msas.h"
#include "pipeline/batch/job_order.h"
#include "pipeline/batch/prediction_files.h"
#include "pipeline/batch/ranking.h"
#include "pipeline/batch/run_settings.h"
#include "pipeline/batch/timings_file.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/output/plots.h"
#include "pipeline/runner/finite_outputs.h"
#include "pipeline/runner/model_cache.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

// A job's failure names the input record it comes from ("FILE:LINE: ..."), unless the message
// already starts with that file (a parser's own location).
std::string located_in_input(const PredictJob& job, const std::string& message) {
  const std::string source = job.source.string();
  if (message.rfind(source, 0) == 0) return message;
  return source + (job.line > 0 ? ":" + std::to_string(job.line) : "") + ": " + message;
}

class BatchRunner {
 public:
  BatchRunner(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
              std::map<int, fs::path> params)
      : o_(o),
        jobs_(std::move(jobs)),
        rank_(rank),
        log_(o.output_dir / "log.txt", o.progress),
        models_(std::move(params), o.model_type, o.mem_budget, o.precision),
        timings_(o.output_dir / "timings.json") {
    for (int i = 0; i < o.num_models; ++i) selected_models_.push_back(o.model_order[i]);
  }

  PredictSummary run(const std::vector<std::string>& warnings) {
    start_ = Clock::now();
    log_.say("cpufold predict " + std::string(CPUFOLD_VERSION) + ": " +
             std::to_string(jobs_.size()) + " job(s) from " + o_.input.string() + " into " +
             o_.output_dir.string());
    for (const std::string& w : warnings) log_.say("warning: " + w);
    std::string models;
    for (int m : selected_models_)
      models += (models.empty() ? "model_" : ", model_") + std::to_string(m);
    log_.say(model_type_name(o_.model_type) + " " + models + "; " + std::to_string(o_.num_seeds) +
             " seed(s) from " + std::to_string(o_.random_seed) + "; " +
             std::to_string(o_.num_recycle) + " recycle(s); ranked by " +
             (rank_ == RankBy::ptm ? "pTM" : "mean pLDDT") +
             (models_.keeps_all() ? ""
                                  : "; not enough memory to keep every model loaded: "
                                    "weights are reloaded per job"));
    const double runs_per_job = static_cast<double>(selected_models_.size() * o_.num_seeds);
    for (const PredictJob& job : jobs_) {
      if (job.error.empty() && !is_done(job)) estimate_.plan(runs_per_job * units(job));
    }

    PredictSummary summary;
    auto last_timings = Clock::now();
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      summary.jobs.push_back(run_job(i));
      // After each folded job, but for batches of many tiny jobs not more than every 10 s
      // (the file grows with the batch).
      if (summary.jobs.back().status != JobOutcome::Status::skipped &&
          seconds_since(last_timings) > (i + 1 < jobs_.size() ? 10.0 : 0.0)) {
        timings_.write();
        last_timings = Clock::now();
      }
    }
    timings_.write();

    const auto done = summary.count(JobOutcome::Status::done);
    const auto skipped = summary.count(JobOutcome::Status::skipped);
    const auto failed = summary.count(JobOutcome::Status::failed);
    log_.say("summary: " + std::to_string(done) + " done, " + std::to_string(skipped) +
             " skipped (already done), " + std::to_string(failed) + " failed, in " +
             clock_time(seconds_since(start_)));
    for (const JobOutcome& job : summary.jobs) {
      if (job.status == JobOutcome::Status::failed)
        log_.say("  failed " + job.name + ": " + job.message);
    }
    return summary;
  }

 private:
  double units(const PredictJob& job) const {
    const double n = static_cast<double>(job.sequence.size());
    return static_cast<double>((o_.num_recycle + 1) * o_.num_ensemble) * n * n;
  }

  fs::path done_marker(const PredictJob& job) const {
    return cpufold::done_marker(o_.output_dir, job.name);
  }
  // ColabFold: the marker, or with --zip the job's result.zip.
  bool is_done(const PredictJob& job) const {
    std::error_code ec;  // an unusable path is not a done job; running it reports why
    return !o_.overwrite_existing_results && (fs::exists(done_marker(job), ec) ||
                                              fs::exists(result_zip(o_.output_dir, job.name), ec));
  }

  std::string eta(double current_units, double current_elapsed) const {
    const double left = estimate_.remaining(current_units, current_elapsed);
    return "elapsed " + clock_time(seconds_since(start_)) +
           (left < 0 ? ", estimating time left" : ", ~" + clock_time(left) + " left");
  }

  JobOutcome run_job(std::size_t index) {
    const PredictJob& job = jobs_[index];
    const std::string head =
        "[" + std::to_string(index + 1) + "/" + std::to_string(jobs_.size()) + "] " + job.name;
    const std::string with_length = head + " (" + std::to_string(job.sequence.size()) + " aa)";
    JobOutcome outcome;
    outcome.name = job.name;
    if (!job.error.empty()) {
      outcome.message = job.error;
      log_.say(head + ": FAILED: " + job.error);
      return outcome;
    }
    if (is_done(job)) {
      outcome.status = JobOutcome::Status::skipped;
      outcome.message = "already done (" + done_marker(job).string() + ")";
      log_.say(head + ": skipped, already done (" + done_marker(job).filename().string() + " or " +
               result_zip(o_.output_dir, job.name).filename().string() +
               " exists; --overwrite-existing-results redoes it)");
      return outcome;
    }
    double units_left = static_cast<double>(selected_models_.size() * o_.num_seeds) * units(job);
    try {
      remove_job_outputs(o_.output_dir, job.name);
      const auto job_start = Clock::now();
      log_.say(with_length + ": start, " + eta(0, 0));

      const auto t_features = Clock::now();
      JobExtras extras = job_extras();
      const RawFeatures raw = raw_features(job, with_length, extras);
      JobTiming timing;
      timing.length = job.sequence.size();
      timing.msa_rows = raw.n_msa;
      timing.feature_seconds = seconds_since(t_features);

      std::vector<RenderedPrediction> results;
      // ColabFold's loop order (seeds outside, models inside) matters with --stop-at-score.
      for (int s = 0; s < o_.num_seeds && !score_reached(results); ++s) {
        for (int model_number : selected_models_) {
          if (score_reached(results)) break;
          const std::uint64_t seed = o_.random_seed + static_cast<std::uint64_t>(s);
          results.push_back(run_model(job, raw, model_number, seed, with_length, timing));
          units_left -= units(job);
        }
      }
      if (score_reached(results) &&
          results.size() < selected_models_.size() * static_cast<std::size_t>(o_.num_seeds)) {
        log_.say(head + ": --stop-at-score " + fixed(o_.stop_at_score, 2) + " reached: " +
                 std::to_string(results.size()) + " prediction(s), the others skipped");
        estimate_.drop(units_left);
      }
      write_outputs(job, results, head, extras);
      timing.total_seconds = seconds_since(job_start);
      timings_.job_done(job.name, timing);
      outcome.status = JobOutcome::Status::done;
      log_.say(head + ": done in " + clock_time(seconds_since(job_start)) + ", " + eta(0, 0));
    } catch (const InputError& e) {
      outcome.message = located_in_input(job, e.what());
    } catch (const BudgetError& e) {
      outcome.message = located_in_input(job, e.what());
      outcome.out_of_memory = true;
    } catch (const fs::filesystem_error& e) {
      // A path of this job the file system refuses fails the job, not the batch.
      outcome.message = located_in_input(job, e.what());
    } catch (const NonFiniteOutputError& e) {
      outcome.message = e.what();
    } catch (const std::bad_alloc&) {
      outcome.message = located_in_input(job, out_of_memory("folding this job").what());
      outcome.out_of_memory = true;
    }
    outcome.message = text::safe_text(outcome.message);
    if (outcome.status == JobOutcome::Status::failed) {
      estimate_.drop(units_left);
      log_.say(head + ": FAILED: " + outcome.message);
      timings_.job_failed(job.name, outcome.message);
    }
    return outcome;
  }

  bool score_reached(const std::vector<RenderedPrediction>& results) const {
    return !results.empty() && results.back().score > o_.stop_at_score;
  }

  JobExtras job_extras() const {
    JobExtras extras;
    extras.plots = !o_.skip_plots;
    extras.pae_json = !o_.skip_pae_json;
    extras.zip = o_.zip;
    return extras;
  }

  // The job's MSAs merged into raw features; the MSA and its coverage plot into `extras`.
  RawFeatures raw_features(const PredictJob& job, const std::string& head, JobExtras& extras) {
    const JobMsas m = load_job_msas(job, o_.msa_dir,
                                    [&](const std::string& line) { log_.say(head + ": " + line); });
    RawFeatures raw = make_raw_features(job.sequence, m.msas, m.names);
    if (!m.files.empty()) {
      log_.say(head + ": " + std::to_string(raw.n_msa) + " MSA rows after removing duplicates");
    }
    if (!o_.skip_msa) extras.a3m = job_a3m(job.sequence, m.files, m.msas);
    if (!o_.skip_plots) {
      extras.coverage_png = coverage_plot_png(job.name, raw.msa, raw.n_msa, raw.n_res);
    }
    return raw;
  }

  RenderedPrediction run_model(const PredictJob& job, const RawFeatures& raw, int model_number,
                               std::uint64_t seed, const std::string& head, JobTiming& timing) {
    const std::string model = "model_" + std::to_string(model_number);
    const std::string where = head + " " + model + " seed " + seed_tag(seed);
    const bool loading = !models_.is_loaded(model_number);
    const LoadedModel& loaded = models_.get(model_number);
    const double load_seconds = loading ? loaded.load_seconds : 0;
    if (loading) {
      const WeightResidency weights = loaded.runner->weight_residency();
      const auto mib = [](std::size_t bytes) {
        return fixed(static_cast<double>(bytes) / (1 << 20), 1) + " MiB";
      };
      log_.say("loaded " + model + " from " + loaded.store.path().string() + " (" +
               std::to_string(loaded.config.parameter_count) + " parameters) in " +
               fixed(load_seconds, 1) + " s; weights " + mib(weights.shared_bytes) +
               " mapped shared, " + mib(weights.private_bytes) + " private");
    }

    const auto run_start = Clock::now();
    const FeaturePipeline pipeline(raw, model_feature_config(o_, model, seed));
    const double pipeline_seconds = seconds_since(run_start);
    const double run_units = units(job);

    RunOptions run = model_run_options(o_);
    run.other_weight_bytes = models_.other_weight_bytes(model_number);
    run.progress = [&](const std::string& message) {
      log_.say(where + ": " + message + " | " + eta(run_units, seconds_since(run_start)));
    };
    const std::string tag = model_type_name(o_.model_type) + "_model_" +
                            std::to_string(model_number) + "_seed_" + seed_tag(seed);
    std::vector<std::string> recycle_pdbs;
    // A resumed run would miss the structures of the iterations before its checkpoint.
    run.checkpoints = !o_.save_recycles;
    char context[64];
    std::snprintf(context, sizeof context, "stop_at_score %a rank %d", o_.stop_at_score,
                  static_cast<int>(rank_));
    run.checkpoint_context = context;
    if (o_.save_recycles || o_.stop_at_score < 100) {
      // ColabFold checks its ranking score after every recycle (and saves each structure).
      run.after_iteration = [&](const Prediction& now, std::int64_t) {
        if (o_.save_recycles) {
          recycle_pdbs.push_back(render_pdb(view_of(now, raw), job.name, tag));
        }
        return ranking_score(now, rank_) > o_.stop_at_score;
      };
    }
    const Prediction p = loaded.runner->run(pipeline.source(feature_samples(o_)), run);
    const double run_seconds = seconds_since(run_start);
    estimate_.finished(run_units, run_seconds);
    float ptm = p.ptm_score;
    const NamedOutput checked[] = {
        {"atom positions", p.final_atom_positions},
        {"pLDDT", p.plddt},
        {"PAE", p.has_pae ? p.predicted_aligned_error : Tensor()},
        {"pTM", p.has_pae ? Tensor(&ptm, DType::f32, Shape{}) : Tensor()}};
    require_finite_outputs(checked, model + " seed " + seed_tag(seed));

    RenderedPrediction r = render_prediction(view_of(p, raw), job.name,
                                             model_type_name(o_.model_type), model_number, seed);
    r.score = ranking_score(p, rank_);
    r.recycle_pdbs = std::move(recycle_pdbs);
    write_unranked_files(
        o_.output_dir, job.name, tag, p,
        {o_.save_all, o_.save_single_representations, o_.save_pair_representations}, r);

    std::string line = where + ": done in " + fixed(run_seconds, 1) + " s (" +
                       std::to_string(p.iterations) + " iteration(s)), pLDDT " +
                       fixed(r.mean_plddt, 1);
    if (p.has_pae) line += ", pTM " + fixed(r.ptm, 3);
    line += ", peak RSS " + std::to_string(p.peak_rss_bytes >> 20) + " MiB (predicted " +
            std::to_string(p.plan.dram_peak_bytes >> 20) + ")";
    log_.say(line + " | " + eta(0, 0));

    RunTiming t;
    t.model = model;
    t.seed = seed;
    t.load_seconds = load_seconds;
    t.feature_seconds = pipeline_seconds;
    t.model_seconds = p.timings;
    t.iterations = p.iterations;
    t.n_seq = pipeline.n_seq();
    t.n_extra = pipeline.n_extra();
    t.mean_plddt = r.mean_plddt;
    if (p.has_pae) t.ptm = r.ptm;
    t.planned_bytes = p.planned_bytes;
    t.peak_rss_bytes = p.peak_rss_bytes;
    t.predicted_peak_bytes = p.plan.dram_peak_bytes;
    t.chunk = p.plan.chosen.chunk;
    timing.runs.push_back(std::move(t));
    return r;
  }

  void write_outputs(const PredictJob& job, std::vector<RenderedPrediction>& results,
                     const std::string& head, const JobExtras& extras) {
    sort_by_score(results);
    for (std::size_t k = 0; k < results.size(); ++k) {
      const RenderedPrediction& r = results[k];
      std::string line =
          head + ": " + rank_tag(k + 1) + "_" + r.tag + " pLDDT=" + fixed(r.mean_plddt, 3);
      if (r.has_pae) line += " pTM=" + fixed(r.ptm, 3);
      log_.say(line);
    }
    write_job_outputs(o_.output_dir, job.name, results, extras);
  }

  const PredictOptions& o_;
  std::vector<PredictJob> jobs_;
  RankBy rank_;
  BatchLog log_;
  ModelCache models_;
  std::vector<int> selected_models_;
  TimingsFile timings_;
  TimeEstimate estimate_;
  Clock::time_point start_;
};

void check_options(const PredictOptions& o) {
  if (o.num_models < 1 || o.num_models > 5) {
    throw InputError("--num-models must be 1 to 5, not " + std::to_string(o.num_models));
  }
  std::set<int> seen;
  for (int m : o.model_order) {
    if (m < 1 || m > 5) {
      throw InputError("--model-order lists AlphaFold2 models 1 to 5, not " + std::to_string(m));
    }
    if (!seen.insert(m).second) {
      throw InputError("--model-order names model " + std::to_string(m) + " twice");
    }
  }
  if (static_cast<std::size_t>(o.num_models) > o.model_order.size()) {
    throw InputError("--num-models " + std::to_string(o.num_models) + " needs as many models " +
                     "in --model-order, which lists " + std::to_string(o.model_order.size()));
  }
  if (o.num_recycle < 0) throw InputError("--num-recycle must be >= 0");
  if (o.num_seeds < 1) throw InputError("--num-seeds must be >= 1");
  if (o.num_ensemble < 1) throw InputError("--num-ensemble must be >= 1");
  if (o.max_seq && *o.max_seq < 1) throw InputError("--max-seq must be >= 1 (the query row)");
  if (o.max_extra_seq && *o.max_extra_seq < 0) throw InputError("--max-extra-seq must be >= 0");
  if (o.chunk_size && *o.chunk_size < 0) throw InputError("--chunk-size must be >= 0");
  if (!o.msa_dir.empty() && !fs::is_directory(o.msa_dir)) {
    throw InputError("--msa-dir " + o.msa_dir.string() + ": not a directory");
  }
}

}  // namespace

BatchInputs batch_inputs(const PredictOptions& o) {
  check_options(o);
  // Parameters first: a missing file stops the batch before any work (and names the path).
  BatchInputs in;
  for (int i = 0; i < o.num_models; ++i) {
    in.params[o.model_order[i]] = find_params(o.data_dir, o.model_order[i], o.model_type);
  }
  in.jobs = discover_jobs(o.input, o.sort_queries_by);
  reorder_jobs(in.jobs.jobs, o.sort_queries_by, o.random_seed);
  apply_jobname_prefix(in.jobs.jobs, o.jobname_prefix);
  return in;
}

std::size_t PredictSummary::count(JobOutcome::Status status) const {
  return static_cast<std::size_t>(std::count_if(
      jobs.begin(), jobs.end(), [&](const JobOutcome& j) { return j.status == status; }));
}

namespace {

PredictSummary run_batch(const PredictOptions& o) {
  auto [params, jobs] = batch_inputs(o);

  std::error_code ec;
  fs::create_directories(o.output_dir, ec);
  if (!fs::is_directory(o.output_dir)) {
    throw InputError(o.output_dir.string() + ": cannot create the output directory" +
                     (ec ? " (" + ec.message() + ")" : ""));
  }
  const std::size_t stale = remove_stale_temporaries(o.output_dir);

  RankBy rank = o.rank == RankBy::automatic ? RankBy::plddt : o.rank;
  std::string rank_note;
  if (rank == RankBy::ptm && o.model_type != ModelType::alphafold2_ptm) {
    rank = RankBy::plddt;
    rank_note = "--rank ptm needs --model-type alphafold2_ptm: ranking by mean pLDDT";
  }
  write_file_atomically(o.output_dir / "config.json", config_json(o, rank, jobs.jobs.size()));
  const bool used_msas =
      !o.msa_dir.empty() || std::any_of(jobs.jobs.begin(), jobs.jobs.end(),
                                        [](const PredictJob& j) { return !j.a3m.empty(); });
  write_file_atomically(o.output_dir / "cite.bibtex", cite_bibtex(used_msas));

  BatchRunner runner(o, std::move(jobs.jobs), rank, std::move(params));
  if (stale > 0) {
    jobs.warnings.push_back("removed " + std::to_string(stale) +
                            " temporary file(s) left by an interrupted run");
  }
  if (!rank_note.empty()) jobs.warnings.push_back(rank_note);
  return runner.run(jobs.warnings);
}

}  // namespace

PredictSummary predict(const PredictOptions& o) {
  try {
    return run_batch(o);
  } catch (const std::exception& e) {
    // A batch that stops leaves its reason beside the progress lines, not only on stderr.
    std::error_code ec;
    if (fs::is_directory(o.output_dir, ec)) {
      append_log_line(o.output_dir / "log.txt", std::string("error: ") + e.what());
    }
    throw;
  }
}

}  // namespace cpufold
