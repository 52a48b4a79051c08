#include "pipeline/batch/batch_runner.h"

#include <chrono>
#include <new>

#include "io/file_identity.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "memory/out_of_memory.h"
#include "pipeline/batch/batch_log_lines.h"
#include "pipeline/batch/batch_progress.h"
#include "pipeline/batch/config_json.h"
#include "pipeline/batch/finished_runs.h"
#include "pipeline/batch/job_a3m.h"
#include "pipeline/batch/job_msas.h"
#include "pipeline/batch/job_search.h"
#include "pipeline/batch/job_templates.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/batch/prediction_files.h"
#include "pipeline/batch/ranking.h"
#include "pipeline/batch/run_record.h"
#include "pipeline/batch/run_settings.h"
#include "pipeline/batch/timings_file.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/output/plots.h"
#include "pipeline/runner/finite_outputs.h"
#include "pipeline/runner/model_cache.h"
#include "pipeline/runner/wall_clock.h"
#include "pipeline/search/external_program.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using Clock = WallClock;

class BatchRunner {
 public:
  BatchRunner(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
              std::map<int, fs::path> params)
      : o_(o),
        jobs_(std::move(jobs)),
        rank_(rank),
        log_(batch_log_path(o), o.progress),
        params_(params),
        settings_(output_settings_json(o, rank)),
        models_(std::move(params), o.model_type, o.mem_budget, o.precision),
        timings_(batch_timings_path(o)),
        search_seconds_(o.search_seconds) {
    for (int i = 0; i < o.num_models; ++i) selected_models_.push_back(o.model_order[i]);
  }

  PredictSummary run(const std::vector<std::string>& warnings) {
    start_ = Clock::now();
    log_.say(batch_start_line(CPUFOLD_VERSION, jobs_.size(), o_.input, o_.output_dir));
    for (const std::string& w : warnings) log_.say("warning: " + w);
    log_.say(batch_settings_line({model_type_name(o_.model_type), selected_models_, o_.num_seeds,
                                  o_.random_seed, o_.num_recycle, rank_ == RankBy::ptm,
                                  models_.keeps_all()}));
    // --databases: the jobs' searches before any fold, on all the threads (a worker's job was
    // searched by its batch, which passes the time on).
    if (o_.worker_job.empty()) {
      search_seconds_.merge(
          search_each_job(o_, jobs_, [&](const std::string& line) { log_.say(line); }));
    }
    for (const PredictJob& job : jobs_) {
      if (job.error.empty() && !is_done(job))
        estimate_.plan(static_cast<double>(runs_per_job()) * units(job));
    }
    recover_timings();

    PredictSummary summary;
    auto last_timings = Clock::now();
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      JobOutcome outcome = run_job(i);
      const bool folded = outcome.status != JobOutcome::Status::skipped;
      summary.add(std::move(outcome));
      // After each folded job, but for batches of many tiny jobs not more than every 10 s
      // (the file grows with the batch).
      if (folded && seconds_since(last_timings) > (i + 1 < jobs_.size() ? 10.0 : 0.0)) {
        write_timings();
        last_timings = Clock::now();
      }
    }
    write_timings();

    log_.say(batch_summary_line(summary.count(JobOutcome::Status::done),
                                summary.count(JobOutcome::Status::skipped),
                                summary.count(JobOutcome::Status::failed), seconds_since(start_)));
    for (const JobOutcome& job : summary.failures) log_.say(failed_job_line(job.name, job.message));
    return summary;
  }

 private:
  std::size_t runs_per_job() const {
    return selected_models_.size() * static_cast<std::size_t>(o_.num_seeds);
  }
  double units(const PredictJob& job) const {
    const double n = static_cast<double>(job.sequence.size());
    return static_cast<double>((o_.num_recycle + 1) * o_.num_ensemble) * n * n;
  }

  // Jobs done by a run that was killed before it wrote timings.json: their records come back
  // from the copy each job leaves under logs/ before it is marked done.
  void recover_timings() {
    if (!o_.worker_job.empty()) return;  // a worker's file is its job's own record
    std::vector<std::string> done;
    for (const PredictJob& job : jobs_) {
      if (job.error.empty() && is_done(job)) done.push_back(job.name);
    }
    timings_.recover(
        done, [&](const std::string& job) { return worker_timings_path(o_.output_dir, job); });
  }

  // A timings.json that cannot be written costs the batch nothing else: its results are on
  // disk and its summary is still printed (the records stay in memory for the next attempt).
  void write_timings() {
    try {
      timings_.write();
    } catch (const std::exception& e) {
      if (!timings_warned_) log_.say(std::string("warning: timings.json not written: ") + e.what());
      timings_warned_ = true;
    }
  }

  // The job's record under logs/, written before the job is marked done.
  void keep_job_timing(const PredictJob& job, const JobTiming& timing) {
    if (!o_.worker_job.empty()) return;  // the worker's timings file is that record already
    TimingsFile own(worker_timings_path(o_.output_dir, job.name));
    own.job_done(job.name, timing);
    std::error_code ec;
    fs::create_directories(job_logs_dir(o_.output_dir), ec);
    try {
      own.write();
    } catch (const InputError&) {
      // Only recovery after a kill needs it; timings.json is still written.
    }
  }

  fs::path done_marker(const PredictJob& job) const {
    return cpufold::done_marker(o_.output_dir, job.name);
  }
  bool is_done(const PredictJob& job) const { return job_done_already(o_, job.name); }

  std::string eta(double current_units, double current_elapsed) const {
    return eta_text(seconds_since(start_), estimate_.remaining(current_units, current_elapsed));
  }

  JobOutcome run_job(std::size_t index) {
    const PredictJob& job = jobs_[index];
    const std::string head = job_head(index, jobs_.size(), job.name);
    JobOutcome outcome;
    outcome.name = job.name;
    if (!job.error.empty()) {
      outcome.message = job.error;
      outcome.program_failed = job.error_kind == PredictJob::ErrorKind::program;
      outcome.out_of_memory = job.error_kind == PredictJob::ErrorKind::memory;
      log_.say(job_failed_line(head, job.error));
      return outcome;
    }
    if (is_done(job)) {
      outcome.status = JobOutcome::Status::skipped;
      outcome.message = "already done (" + done_marker(job).string() + ")";
      log_.say(job_skipped_line(head, done_marker(job).filename().string(),
                                result_zip(o_.output_dir, job.name).filename().string()));
      return outcome;
    }
    double units_left = static_cast<double>(runs_per_job()) * units(job);
    try {
      fold_job(job, head, units_left);
      outcome.status = JobOutcome::Status::done;
    } catch (const InputError& e) {
      outcome.message = located_in_input(job.source, job.line, e.what());
    } catch (const BudgetError& e) {
      outcome.message = located_in_input(job.source, job.line, e.what());
      outcome.out_of_memory = true;
    } catch (const fs::filesystem_error& e) {
      // A path of this job the file system refuses fails the job, not the batch.
      outcome.message = located_in_input(job.source, job.line, e.what());
    } catch (const NonFiniteOutputError& e) {
      outcome.message = e.what();
    } catch (const ExternalProgramError& e) {
      // A search program (--templates) that fails on this job's data fails the job.
      outcome.message = located_in_input(job.source, job.line, e.what());
      outcome.program_failed = true;
    } catch (const std::bad_alloc&) {
      outcome.message =
          located_in_input(job.source, job.line, out_of_memory("folding this job").what());
      outcome.out_of_memory = true;
    }
    outcome.message = text::safe_text(outcome.message);
    if (outcome.status == JobOutcome::Status::failed) {
      estimate_.drop(units_left);
      log_.say(job_failed_line(head, outcome.message));
      timings_.job_failed(job.name, outcome.message);
    }
    return outcome;
  }

  // Features, every model run, the ranked files and the job's timings. `units_left`: the work
  // of the runs not done yet (what the estimate drops when the job fails).
  void fold_job(const PredictJob& job, const std::string& head, double& units_left) {
    const std::string with_length = job_head_with_length(head, job.sequence.size());
    const auto job_start = Clock::now();
    log_.say(job_start_line(with_length, eta(0, 0)));

    JobExtras extras = job_extras();
    JobTiming timing;
    const RawFeatures raw = raw_features(job, with_length, extras, timing);
    // Finished runs are kept only for a job of several runs (one run ends in the job's files).
    const std::string features = runs_per_job() > 1 ? features_hash(raw) : std::string();
    std::map<std::string, FinishedRun> finished = finished_runs(job, features);
    std::set<std::string> kept;
    for (const auto& [tag, run] : finished) kept.insert(tag);
    remove_job_outputs(o_.output_dir, job.name, kept);
    std::vector<RenderedPrediction> results =
        run_models(job, raw, features, with_length, timing, units_left, finished);
    if (score_reached(results) && results.size() < runs_per_job()) {
      log_.say(stop_at_score_line(head, o_.stop_at_score, results.size()));
      estimate_.drop(units_left);
    }
    timing.total_seconds = seconds_since(job_start);
    keep_job_timing(job, timing);
    write_outputs(job, results, head, extras);
    remove_finished_runs(o_.output_dir, job.name);
    timings_.job_done(job.name, timing);
    log_.say(job_done_line(head, seconds_since(job_start), eta(0, 0)));
  }

  std::string tag_of(int model_number, std::uint64_t seed) const {
    return model_type_name(o_.model_type) + "_model_" + std::to_string(model_number) + "_seed_" +
           seed_tag(seed);
  }
  // `features`: features_hash() of the job's raw features, computed once per job.
  std::string run_key(const std::string& features, int model_number, std::uint64_t seed) {
    auto [it, fresh] = params_hashes_.try_emplace(model_number);
    if (fresh) it->second = file_content_hash(params_.at(model_number));
    return finished_run_key(settings_, it->second, features, model_number, seed);
  }

  // The runs of this job that a stopped batch finished, by tag: records of these settings
  // and features whose unranked files (if any) are still there. None without `features`.
  std::map<std::string, FinishedRun> finished_runs(const PredictJob& job,
                                                   const std::string& features) {
    std::map<std::string, FinishedRun> found;
    for (int s = 0; s < o_.num_seeds && !features.empty(); ++s) {
      const std::uint64_t seed = o_.random_seed + static_cast<std::uint64_t>(s);
      for (int model_number : selected_models_) {
        const std::string tag = tag_of(model_number, seed);
        std::optional<FinishedRun> run = load_finished_run(
            finished_run_path(o_.output_dir, job.name, tag), run_key(features, model_number, seed));
        if (!run) continue;
        std::error_code ec;
        bool whole = true;
        for (const auto& u : run->prediction.unranked)
          whole =
              whole && fs::exists(unranked_path(o_.output_dir, job.name, u.kind, tag, u.ext), ec);
        if (whole) found.emplace(tag, std::move(*run));
      }
    }
    return found;
  }

  // ColabFold's loop order (seeds outside, models inside) matters with --stop-at-score.
  std::vector<RenderedPrediction> run_models(const PredictJob& job, const RawFeatures& raw,
                                             const std::string& features, const std::string& head,
                                             JobTiming& timing, double& units_left,
                                             std::map<std::string, FinishedRun>& finished) {
    std::vector<RenderedPrediction> results;
    for (int s = 0; s < o_.num_seeds && !score_reached(results); ++s) {
      for (int model_number : selected_models_) {
        if (score_reached(results)) break;
        const std::uint64_t seed = o_.random_seed + static_cast<std::uint64_t>(s);
        if (auto it = finished.find(tag_of(model_number, seed)); it != finished.end()) {
          log_.say(head + " model_" + std::to_string(model_number) + " seed " + seed_tag(seed) +
                   ": finished by an earlier run that was stopped; its results are kept");
          results.push_back(std::move(it->second.prediction));
          timing.runs.push_back(std::move(it->second.timing));
          estimate_.drop(units(job));
        } else {
          results.push_back(run_model(job, raw, model_number, seed, head, timing));
          // Kept for a resume when a later run of the job follows (a job's last run ends in
          // its files being written).
          if (!features.empty() && results.size() < runs_per_job()) {
            save_finished_run(
                finished_run_path(o_.output_dir, job.name, tag_of(model_number, seed)),
                run_key(features, model_number, seed), {results.back(), timing.runs.back()});
          }
        }
        units_left -= units(job);
      }
    }
    return results;
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

  // The job's MSAs merged into raw features; the MSA and its coverage plot into `extras`;
  // length, depth and seconds into `timing`.
  RawFeatures raw_features(const PredictJob& job, const std::string& head, JobExtras& extras,
                           JobTiming& timing) {
    const auto start = Clock::now();
    const JobMsas m = load_job_msas(job, msa_sources(o_),
                                    [&](const std::string& line) { log_.say(head + ": " + line); });
    RawFeatures raw = make_raw_features(job.sequence, m.msas, m.names);
    msa_ = MsaReport{std::string(msa_source_name(m.source)), {}, raw.n_msa};
    for (std::size_t i = 0; i < m.files.size(); ++i) {
      msa_.files.push_back(
          {text::safe_text(m.names[i]), static_cast<std::int64_t>(m.msas[i].sequences.size())});
    }
    log_.say(msa_rows_line(head, msa_.source, raw.n_msa));
    if (o_.templates) {
      JobTemplates t = load_job_templates(
          job, o_, [&](const std::string& line) { log_.say(head + ": " + line); });
      timing.templates = t.raw.n_templ;
      timing.template_source = t.source;
      timing.template_seconds = t.seconds;
      raw.templates = std::move(t.raw);
    }
    if (!o_.skip_msa) extras.a3m = job_a3m(job.sequence, m.files, m.msas);
    if (!o_.skip_plots) {
      extras.coverage_png = coverage_plot_png(job.name, raw.msa, raw.n_msa, raw.n_res);
    }
    timing.length = job.sequence.size();
    if (const auto it = search_seconds_.find(job.name); it != search_seconds_.end()) {
      timing.search_seconds = it->second;
    }
    timing.msa_rows = raw.n_msa;
    timing.feature_seconds = seconds_since(start);
    return raw;
  }

  // The model, loaded on first use (and then logged); `load_seconds` 0 when it was loaded.
  const LoadedModel& model(int model_number, double& load_seconds) {
    const bool loading = !models_.is_loaded(model_number);
    const LoadedModel& loaded = models_.get(model_number);
    load_seconds = loading ? loaded.load_seconds : 0;
    if (loading) {
      const WeightResidency weights = loaded.runner->weight_residency();
      log_.say(model_loaded_line({"model_" + std::to_string(model_number), loaded.path(),
                                  loaded.config().parameter_count, load_seconds,
                                  weights.shared_bytes, weights.private_bytes}));
    }
    return loaded;
  }

  RenderedPrediction run_model(const PredictJob& job, const RawFeatures& raw, int model_number,
                               std::uint64_t seed, const std::string& head, JobTiming& timing) {
    RunTiming run;  // its record in timings.json
    run.model = "model_" + std::to_string(model_number);
    run.seed = seed;
    const std::string where = head + " " + run.model + " seed " + seed_tag(seed);
    const LoadedModel& loaded = model(model_number, run.load_seconds);

    const auto run_start = Clock::now();
    const FeaturePipeline pipeline(raw, model_feature_config(o_, run.model, seed));
    run.feature_seconds = seconds_since(run_start);
    run.n_seq = pipeline.n_seq();
    run.n_extra = pipeline.n_extra();
    const double run_units = units(job);
    const std::string tag = tag_of(model_number, seed);

    RunOptions options = batch_run_options(o_, rank_);
    options.other_weight_bytes = models_.other_weight_bytes(model_number);
    options.progress = [&](const std::string& message) {
      log_.say(where + ": " + message + " | " + eta(run_units, seconds_since(run_start)));
    };
    const Prediction p = loaded.runner->run(pipeline.source(feature_samples(o_)), options);
    const double run_seconds = seconds_since(run_start);
    estimate_.finished(run_units, run_seconds);
    require_finite_prediction(p, run.model + " seed " + seed_tag(seed));

    RenderedPrediction r = render(job, raw, p, model_number, seed);
    for (const IterationStructure& s : p.kept_iterations)
      r.recycle_pdbs.push_back(render_pdb(view_of(s, raw), job.name, tag));
    write_unranked_files(
        o_.output_dir, job.name, tag, p,
        {o_.save_all, o_.save_single_representations, o_.save_pair_representations}, r);
    run = run_timing(std::move(run), p, r);
    log_.say(run_done_line(where, run_seconds, run) + " | " + eta(0, 0));
    timing.runs.push_back(std::move(run));
    return r;
  }

  RenderedPrediction render(const PredictJob& job, const RawFeatures& raw, const Prediction& p,
                            int model_number, std::uint64_t seed) const {
    RenderedPrediction r = render_prediction(
        view_of(p, raw), job.name, model_type_name(o_.model_type), model_number, seed, &msa_);
    r.score = ranking_score(p, rank_);
    return r;
  }

  void write_outputs(const PredictJob& job, std::vector<RenderedPrediction>& results,
                     const std::string& head, const JobExtras& extras) {
    sort_by_score(results);
    for (std::size_t k = 0; k < results.size(); ++k) {
      const RenderedPrediction& r = results[k];
      log_.say(ranked_line(head, k + 1, r.tag, r.mean_plddt, r.has_pae, r.ptm));
    }
    write_job_outputs(o_.output_dir, job.name, results, extras);
  }

  const PredictOptions& o_;
  std::vector<PredictJob> jobs_;
  RankBy rank_;
  BatchLog log_;
  std::map<int, fs::path> params_;            // per model, for the finished runs' keys
  std::string settings_;                      // output_settings_json: the finished runs' keys
  std::map<int, std::string> params_hashes_;  // file_content_hash of params_, on first use
  ModelCache models_;
  std::vector<int> selected_models_;
  TimingsFile timings_;
  std::map<std::string, double> search_seconds_;  // per job searched by this batch
  bool timings_warned_ = false;
  TimeEstimate estimate_;
  Clock::time_point start_;
  MsaReport msa_;  // the current job's MSA source and depth, for its scores JSON
};

}  // namespace

PredictSummary run_jobs(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
                        std::map<int, fs::path> params, const std::vector<std::string>& warnings) {
  BatchRunner runner(o, std::move(jobs), rank, std::move(params));
  return runner.run(warnings);
}

}  // namespace cpufold
