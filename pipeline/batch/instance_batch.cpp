#include "pipeline/batch/instance_batch.h"

#include <omp.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>

#include "io/atomic_file.h"
#include "io/text_safety.h"
#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/peak_tracker.h"
#include "memory/system_memory.h"
#include "pipeline/batch/admission.h"
#include "pipeline/batch/batch_log_lines.h"
#include "pipeline/batch/batch_progress.h"
#include "pipeline/batch/batch_record.h"
#include "pipeline/batch/batch_runner.h"
#include "pipeline/batch/job_search.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/batch/node_cores.h"
#include "pipeline/batch/node_sizing.h"
#include "pipeline/batch/plan_jobs.h"
#include "pipeline/batch/run_settings.h"
#include "pipeline/batch/stop_signals.h"
#include "pipeline/batch/timings_file.h"
#include "pipeline/batch/worker_process.h"
#include "pipeline/runner/instance_layout.h"
#include "pipeline/runner/model_cache.h"
#include "pipeline/runner/wall_clock.h"
#include "pipeline/search/msa_search.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using Clock = WallClock;

struct NodeBudget {
  std::size_t bytes = 0;
  std::string source;
};

NodeBudget node_budget(const PredictOptions& o) {
  if (o.mem_budget) return {*o.mem_budget, "--mem-budget"};
  const std::size_t usable = usable_memory_bytes();
  if (usable == 0) {
    throw InputError("cannot tell how much memory this machine has: pass --mem-budget TOTAL");
  }
  return {usable, cgroup_memory() ? "the cgroup's limit less its usage" : "MemAvailable"};
}

// One job of the batch, from its plan to its end.
struct NodeJob {
  std::size_t index = 0;                            // into the batch's jobs
  JobPlan plan;                                     // the fastest plan under the budget
  std::size_t shared = 0, peak = 0, lean_peak = 0;  // peaks include the shared weights
  double relative = 1, lean_relative = 1;
  bool alone = false;            // spilled: runs with nothing beside it
  bool retry = false;            // a worker died: runs again alone with the leanest plan
  bool awaiting_search = false;  // its MSA is being searched: planned at the deepest MSA
  ChunkSizes lean_chunks;
  InstanceJobRecord record;
  // While it runs.
  pid_t pid = 0;
  std::size_t budget = 0;          // its worker's --mem-budget (worker_budget_bytes)
  std::vector<std::size_t> slots;  // the instances (core sets) it holds
  CoreSlot cores;                  // their cores together
  bool lean_run = false;
  Clock::time_point start;
  double seconds = 0;  // predicted, for the plan it runs with
};

// A search of predict --databases: a worker (--worker-search) on one instance's cores, counted as
// --search-memory. One per job, or one for every job at once with mmseqs2, which searches a
// batch of queries faster than each alone.
struct SearchTask {
  std::vector<std::size_t> jobs;  // into the batch's jobs, in their fold order
  bool whole_batch = false;       // the worker searches every job to search (no --worker-job)
  std::size_t residues = 0;
  pid_t pid = 0;
  std::size_t slot = 0;
  Clock::time_point start;
  double seconds = 0;  // predicted from the searches finished so far; 0: none yet
};

class NodeBatch {
 public:
  NodeBatch(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
            std::map<int, fs::path> params)
      : o_(o),
        jobs_(std::move(jobs)),
        rank_(rank),
        params_(std::move(params)),
        budget_(node_budget(o)),
        scaling_(machine_time_model().instances) {}

  PredictSummary run(const std::vector<std::string>& warnings);

 private:
  void plan_jobs_on_node();
  NodeJob plan_node_job(std::size_t index, ModelCache& models, bool msa_pending);
  void queue_searches();
  InstanceLayout choose_layout() const;
  void start_lines(const std::vector<std::string>& warnings, BatchLog& log) const;
  void schedule(BatchLog& log);
  bool admit_one(BatchLog& log);
  void start(std::size_t waiting_index, bool lean, BatchLog& log);
  void start_search(std::size_t index, BatchLog& log);
  void reap(BatchLog& log);
  void finish(NodeJob& job, int status, std::size_t max_rss, BatchLog& log);
  void finish_search(SearchTask& task, int status, std::size_t max_rss, BatchLog& log);
  void search_failed(std::size_t job, const std::string& why, int status, BatchLog& log);
  void put_record(std::size_t job, const InstanceJobRecord& r);
  void job_done(NodeJob& job, BatchLog& log);
  void retry_alone(NodeJob job, BatchLog& log);
  void job_failed(NodeJob& job, const std::string& why, bool out_of_memory, bool unrecorded,
                  BatchLog& log);
  void stop_workers(BatchLog& log);
  void progress_line(BatchLog& log);
  std::vector<std::string> worker_args(const NodeJob& job, std::size_t budget) const;
  std::vector<std::string> search_args(const SearchTask& task) const;
  std::size_t free_bytes() const;
  std::size_t search_bytes() const;
  std::string search_head(const SearchTask& task) const;
  // With `threads` 0: the layout's threads per instance.
  double predicted_seconds(const NodeJob& job, bool lean, int threads = 0) const;
  bool runs_alone_now(std::size_t private_bytes) const;
  std::vector<std::size_t> take_slots(bool all_free);
  void write_record();
  PredictSummary summary(BatchLog& log);

  const PredictOptions& o_;
  std::vector<PredictJob> jobs_;
  RankBy rank_;
  std::map<int, fs::path> params_;
  NodeBudget budget_;
  InstanceScaling scaling_;
  NodeCores cores_;
  InstanceLayout layout_;
  std::vector<CoreSlot> slots_;
  std::vector<bool> slot_busy_;
  std::vector<NodeJob> waiting_;  // longest predicted time first
  std::vector<NodeJob> running_;
  std::vector<SearchTask> searches_waiting_, searches_running_;
  std::map<std::string, double> search_seconds_;  // per searched job, for its timings
  double searched_seconds_ = 0;                   // finished searches: their time and residues
  std::size_t searched_residues_ = 0;
  std::vector<JobOutcome> outcomes_;  // per job of jobs_
  InstanceBatchRecord record_;
  std::vector<std::size_t> record_of_;  // job index -> record_.jobs index
  std::size_t max_shared_ = 0;
  std::unique_ptr<TimingsFile> timings_;
  Clock::time_point start_;
  Clock::time_point last_progress_;
  double measured_ = 0, predicted_done_ = 0;  // seconds of finished jobs, measured and predicted
  std::size_t finished_ = 0, to_run_ = 0;
  int stop_signal_ = 0;
};

NodeJob NodeBatch::plan_node_job(std::size_t index, ModelCache& models, bool msa_pending) {
  NodeJob job;
  job.index = index;
  job.awaiting_search = msa_pending;
  RunOptions run = batch_run_options(o_, rank_);
  run.mem_budget = planning_budget_bytes(budget_.bytes);
  job.plan = plan_job(jobs_[index], o_, models, params_, run, msa_pending);
  if (!job.plan.error.empty()) return job;
  const MemoryPlan& p = job.plan.plan;
  job.shared = shared_weight_bytes(p);
  job.peak = p.dram_peak_bytes;
  job.relative = p.chosen.relative_time;
  job.alone = p.spill_bytes > 0;
  job.lean_peak = job.peak;
  job.lean_relative = job.relative;
  job.lean_chunks = p.chosen.chunks;
  if (p.fits && !job.alone && p.min_budget_bytes < job.peak) {
    run.mem_budget = p.min_budget_bytes;  // the leanest plan, and its time
    const JobPlan lean = plan_job(jobs_[index], o_, models, params_, run, msa_pending);
    if (lean.error.empty() && lean.plan.fits) {
      job.lean_peak = lean.plan.dram_peak_bytes;
      job.lean_relative = lean.plan.chosen.relative_time;
      job.lean_chunks = lean.plan.chosen.chunks;
    }
  }
  return job;
}

void NodeBatch::plan_jobs_on_node() {
  ModelCache models(params_, o_.model_type, budget_.bytes, o_.precision);
  const std::set<std::string> to_search = jobs_to_search(o_, jobs_);
  outcomes_.resize(jobs_.size());
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const PredictJob& job = jobs_[i];
    JobOutcome& out = outcomes_[i];
    out.name = job.name;
    InstanceJobRecord record;
    record.name = job.name;
    record.length = job.sequence.size();
    if (!job.error.empty()) {
      out.message = job.error;
    } else if (job_done_already(o_, job.name)) {
      out.status = JobOutcome::Status::skipped;
      out.message = "already done (" + done_marker(o_.output_dir, job.name).string() + ")";
    } else {
      if (o_.progress)
        o_.progress("planning [" + std::to_string(i + 1) + "/" + std::to_string(jobs_.size()) +
                    "] " + job.name);
      NodeJob planned = plan_node_job(i, models, to_search.contains(job.name));
      if (!planned.plan.error.empty()) {
        out.message = planned.plan.error;
      } else if (!planned.plan.plan.fits) {
        out.message = refusal_message(planned.plan.plan, "job " + job.name);
        out.out_of_memory = true;
      } else {
        planned.record = record;
        planned.record.predicted_peak_bytes = planned.peak;
        max_shared_ = std::max(max_shared_, planned.shared);
        waiting_.push_back(std::move(planned));
        out.status = JobOutcome::Status::interrupted;  // until it ends
      }
    }
    if (out.status != JobOutcome::Status::interrupted) {
      out.message = text::safe_text(out.message);
      record.status = out.status == JobOutcome::Status::skipped ? "skipped" : "failed";
      record.message = out.message;
    } else {
      record.status = "waiting";
    }
    record_of_.push_back(record_.jobs.size());
    record_.jobs.push_back(record);
  }
  std::stable_sort(waiting_.begin(), waiting_.end(), [](const NodeJob& a, const NodeJob& b) {
    return a.plan.flops * a.relative > b.plan.flops * b.relative;
  });
  to_run_ = waiting_.size();
}

// The searches of the waiting jobs, in their folds' order (longest first).
void NodeBatch::queue_searches() {
  const bool whole_batch = o_.search_method == "mmseqs2";
  for (const NodeJob& j : waiting_) {
    if (!j.awaiting_search) continue;
    if (!whole_batch || searches_waiting_.empty()) searches_waiting_.emplace_back();
    SearchTask& task = searches_waiting_.back();
    task.whole_batch = whole_batch;
    task.jobs.push_back(j.index);
    task.residues += jobs_[j.index].sequence.size();
  }
  for (const SearchTask& task : searches_waiting_) {
    for (std::size_t j : task.jobs) {
      SearchTaskRecord& r = record_.jobs[record_of_[j]].search;
      r.status = "waiting";
      r.counted_bytes = search_bytes();
      r.jobs = static_cast<int>(task.jobs.size());
    }
  }
}

InstanceLayout NodeBatch::choose_layout() const {
  std::vector<JobPlan> plans;
  for (const NodeJob& j : waiting_) plans.push_back(j.plan);
  const int threads = o_.threads_per_instance > 0 ? o_.threads_per_instance : o_.threads;
  const int cores = static_cast<int>(cores_.cpus.size());
  if (plans.empty()) return fixed_layout(scaling_, cores, 1, 1, threads);
  return size_node(plans, cores, budget_.bytes, o_.precision, scaling_, o_.instances, threads)
      .layout;
}

double NodeBatch::predicted_seconds(const NodeJob& job, bool lean, int threads) const {
  return run_seconds(scaling_, job.plan.flops, o_.precision,
                     threads > 0 ? threads : layout_.threads, layout_.instances,
                     static_cast<int>(cores_.cpus.size())) *
         (lean ? job.lean_relative : job.relative);
}

// Whether no other waiting job could start beside a job of `private_bytes` now: then that job
// takes every free instance's cores instead of leaving them idle until something ends.
bool NodeBatch::runs_alone_now(std::size_t private_bytes) const {
  const std::size_t free = free_bytes();
  const std::size_t after = free > private_bytes ? free - private_bytes : 0;
  for (const NodeJob& j : waiting_) {
    if (!j.alone && !j.retry && worker_budget_bytes(j.peak) - j.shared <= after) return false;
  }
  return searches_waiting_.empty() || search_bytes() > after;
}

// The slots a starting job takes: the first free one, or every free one (runs_alone_now).
std::vector<std::size_t> NodeBatch::take_slots(bool all_free) {
  std::vector<std::size_t> taken;
  for (std::size_t s = 0; s < slot_busy_.size(); ++s) {
    if (slot_busy_[s]) continue;
    slot_busy_[s] = true;
    taken.push_back(s);
    if (!all_free) break;
  }
  return taken;
}

std::size_t NodeBatch::free_bytes() const {
  std::size_t used = max_shared_ + searches_running_.size() * search_bytes();
  for (const NodeJob& j : running_) used += j.budget - j.shared;
  return budget_.bytes > used ? budget_.bytes - used : 0;
}

// --search-memory, or all the budget leaves beside the weights when that is less: such a search
// then runs alone rather than never.
std::size_t NodeBatch::search_bytes() const {
  const std::size_t room = budget_.bytes > max_shared_ ? budget_.bytes - max_shared_ : 0;
  return std::min(o_.search_memory, room);
}

std::string NodeBatch::search_head(const SearchTask& task) const {
  if (!task.whole_batch) {
    const std::size_t j = task.jobs.front();
    return job_head_with_length(job_head(j, jobs_.size(), jobs_[j].name), jobs_[j].sequence.size());
  }
  return "search of " + std::to_string(task.jobs.size()) + " job(s) (" + o_.search_method + ")";
}

// This batch's command line for a worker on `threads` threads: without the options that shape the
// batch, and without --shard unless `keep_shard` (a worker of one job does not need it).
std::vector<std::string> worker_command(std::size_t threads, bool keep_shard) {
  std::vector<std::string> args = own_command_line();
  if (args.size() < 2 || args[1] != "predict") {
    throw InternalError("a multi-instance batch runs from the cpufold command line only");
  }
  args.erase(args.begin());
  std::vector<std::string> drop{"--instances", "--threads-per-instance", "--threads",
                                "--mem-budget", "--worker-job"};
  if (!keep_shard) drop.push_back("--shard");
  args = without_options(args, drop, {"--quiet", "--worker-search"});
  for (const std::string& a :
       {std::string("--instances"), std::string("1"), std::string("--threads"),
        std::to_string(threads), std::string("--quiet")}) {
    args.push_back(a);
  }
  return args;
}

std::vector<std::string> NodeBatch::worker_args(const NodeJob& job, std::size_t budget) const {
  std::vector<std::string> args = worker_command(job.cores.cpus.size(), false);
  const std::string& name = jobs_[job.index].name;
  for (const std::string& a :
       {std::string("--worker-job"), name, std::string("--mem-budget"), std::to_string(budget)}) {
    args.push_back(a);
  }
  if (const auto it = search_seconds_.find(name); it != search_seconds_.end()) {
    args.push_back("--job-search-seconds");
    args.push_back(std::to_string(it->second));
  }
  return args;
}

std::vector<std::string> NodeBatch::search_args(const SearchTask& task) const {
  std::vector<std::string> args =
      worker_command(slots_[task.slot].cpus.size(), /*keep_shard=*/task.whole_batch);
  args.push_back("--worker-search");
  if (!task.whole_batch) {
    args.push_back("--worker-job");
    args.push_back(jobs_[task.jobs.front()].name);
  }
  return args;
}

void NodeBatch::start(std::size_t waiting_index, bool lean, BatchLog& log) {
  NodeJob job = std::move(waiting_[waiting_index]);
  waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(waiting_index));
  job.lean_run = lean || job.retry;
  const std::size_t planned = job.lean_run ? job.lean_peak : job.peak;
  const std::size_t budget = job.budget = worker_budget_bytes(planned);
  job.slots = take_slots(job.alone || job.retry || runs_alone_now(budget - job.shared));
  job.cores = CoreSlot{};
  std::set<int> numa;
  for (std::size_t s : job.slots) {
    job.cores.cpus.insert(job.cores.cpus.end(), slots_[s].cpus.begin(), slots_[s].cpus.end());
    numa.insert(slots_[s].numa_node);
  }
  job.cores.numa_node = numa.size() == 1 ? *numa.begin() : -1;
  job.seconds = predicted_seconds(job, job.lean_run, static_cast<int>(job.cores.cpus.size()));
  const PredictJob& p = jobs_[job.index];
  std::error_code ec;
  fs::create_directories(worker_log_path(o_.output_dir, p.name).parent_path(), ec);
  fs::remove(worker_timings_path(o_.output_dir, p.name), ec);
  job.start = Clock::now();
  job.pid =
      start_worker({worker_args(job, budget), job.cores, worker_log_path(o_.output_dir, p.name)});

  InstanceJobRecord& r = job.record;
  r.status = "running";
  r.instance = static_cast<int>(job.slots.front()) + 1;
  r.cores = cpu_list(job.cores.cpus);
  r.threads = static_cast<int>(job.cores.cpus.size());
  r.numa_node = job.cores.numa_node;
  ++r.attempts;
  r.start_seconds = seconds_since(start_);
  r.start_time = utc_now();
  r.end_seconds = -1;
  r.end_time.clear();
  r.predicted_seconds = job.seconds;
  r.predicted_peak_bytes = planned;
  r.budget_bytes = budget;
  r.chunks = job.lean_run ? job.lean_chunks : job.plan.plan.chosen.chunks;
  r.lean = job.lean_run;
  r.spilled = job.alone && !job.retry;
  log.say(job_head_with_length(job_head(job.index, jobs_.size(), p.name), p.sequence.size()) +
          ": started on instance " + std::to_string(r.instance) + " (cores " + r.cores +
          (r.numa_node >= 0 ? ", NUMA node " + std::to_string(r.numa_node) : "") +
          "), predicted peak " + format_bytes(planned) + ", ~" + clock_time(job.seconds) +
          (job.retry ? " (retry, alone, leanest plan)"
           : lean    ? " (tighter plan: starts now)"
                     : "") +
          (r.spilled ? " (spilled plan, alone)" : ""));
  put_record(job.index, r);
  running_.push_back(std::move(job));
  write_record();
}

void NodeBatch::start_search(std::size_t index, BatchLog& log) {
  SearchTask task = std::move(searches_waiting_[index]);
  searches_waiting_.erase(searches_waiting_.begin() + static_cast<std::ptrdiff_t>(index));
  task.slot = take_slots(false).front();
  if (searched_residues_ > 0) {
    task.seconds = searched_seconds_ / static_cast<double>(searched_residues_) *
                   static_cast<double>(task.residues);
  }
  const fs::path log_path =
      search_log_path(o_.output_dir, task.whole_batch ? "" : jobs_[task.jobs.front()].name);
  std::error_code ec;
  fs::create_directories(log_path.parent_path(), ec);
  task.start = Clock::now();
  task.pid = start_worker({search_args(task), slots_[task.slot], log_path});
  const std::string cores = cpu_list(slots_[task.slot].cpus);
  for (std::size_t j : task.jobs) {
    SearchTaskRecord& r = record_.jobs[record_of_[j]].search;
    r.status = "running";
    r.cores = cores;
    r.start_seconds = seconds_since(start_);
  }
  log.say(search_head(task) + ": search started on instance " + std::to_string(task.slot + 1) +
          " (cores " + cores + "), counted as " + format_bytes(search_bytes()) +
          (task.seconds > 0 ? ", ~" + clock_time(task.seconds) : "") + "; log " +
          log_path.string());
  searches_running_.push_back(std::move(task));
  write_record();
}

bool NodeBatch::admit_one(BatchLog& log) {
  const int free_slots = static_cast<int>(std::count(slot_busy_.begin(), slot_busy_.end(), false));
  if ((waiting_.empty() && searches_waiting_.empty()) || free_slots == 0) return false;
  for (const NodeJob& j : running_) {
    if (j.alone || j.retry) return false;  // it has the node to itself
  }
  NodeState node;
  node.free_bytes = free_bytes();
  node.free_slots = free_slots;
  node.running = static_cast<int>(running_.size() + searches_running_.size());
  node.next_end_seconds = node.running == 0 ? 0 : 1e300;
  for (const NodeJob& j : running_) {
    node.next_end_seconds =
        std::min(node.next_end_seconds, std::max(0.0, j.seconds - seconds_since(j.start)));
  }
  for (const SearchTask& t : searches_running_) {
    node.next_end_seconds =
        std::min(node.next_end_seconds, std::max(0.0, t.seconds - seconds_since(t.start)));
  }
  // The candidates in the order they are offered: searches ahead of the folds while the folds
  // ready and the searches under way are fewer than the instances, so that an instance that
  // ends its fold finds the next MSA, and no ready fold waits behind a queue of searches.
  struct Candidate {
    bool search = false;
    std::size_t index = 0;
  };
  std::vector<Candidate> order;
  std::vector<JobDemand> demands;
  const auto add_folds = [&] {
    for (std::size_t i = 0; i < waiting_.size(); ++i) {
      const NodeJob& j = waiting_[i];
      if (j.awaiting_search) continue;
      JobDemand d;
      d.peak_bytes = worker_budget_bytes(j.retry ? j.lean_peak : j.peak) - j.shared;
      d.lean_peak_bytes = worker_budget_bytes(j.lean_peak) - j.shared;
      d.seconds = predicted_seconds(j, j.retry);
      d.lean_seconds = predicted_seconds(j, true);
      d.alone = j.alone || j.retry;
      demands.push_back(d);
      order.push_back({false, i});
    }
  };
  const auto add_searches = [&] {
    for (std::size_t i = 0; i < searches_waiting_.size(); ++i) {
      JobDemand d;
      d.peak_bytes = d.lean_peak_bytes = search_bytes();
      d.seconds = d.lean_seconds = searches_waiting_[i].seconds;
      demands.push_back(d);
      order.push_back({true, i});
    }
  };
  const auto ready = std::count_if(waiting_.begin(), waiting_.end(),
                                   [](const NodeJob& j) { return !j.awaiting_search; });
  if (ready + static_cast<std::ptrdiff_t>(searches_running_.size()) < layout_.instances) {
    add_searches();
    add_folds();
  } else {
    add_folds();
    add_searches();
  }
  const std::optional<Admission> a = next_admission(demands, node);
  if (!a) return false;
  if (order[a->job].search) {
    start_search(order[a->job].index, log);
  } else {
    start(order[a->job].index, a->lean, log);
  }
  return true;
}

// The last "error:" line a worker wrote to its log, for a worker that died before recording why.
std::string last_error_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (const std::size_t at = line.find("error: "); at != std::string::npos)
      last = line.substr(at + 7);
  }
  return last;
}

void NodeBatch::finish(NodeJob& job, int status, std::size_t max_rss, BatchLog& log) {
  const PredictJob& p = jobs_[job.index];
  for (std::size_t s : job.slots) slot_busy_[s] = false;
  InstanceJobRecord& r = job.record;
  r.end_seconds = seconds_since(start_);
  r.end_time = utc_now();
  r.measured_peak_bytes = max_rss;
  r.exit = describe_exit(status);
  const auto worker = timings_->merge_job_from(worker_timings_path(o_.output_dir, p.name), p.name);
  const int code = exit_code_of(status);
  if (code == 0 && worker && worker->status == "done") {
    job_done(job, log);
  } else if (stop_signal_ != 0) {
    outcomes_[job.index].status = JobOutcome::Status::interrupted;
    outcomes_[job.index].message = "stopped by signal " + std::to_string(stop_signal_);
    r.status = "interrupted";
    log.say(job_head(job.index, jobs_.size(), p.name) + ": stopped (" + r.exit +
            "); a rerun resumes it");
  } else if ((killed_by_signal(status) || code == 4) && !job.retry) {
    retry_alone(std::move(job), log);
    return;
  } else {
    const std::string why = worker && !worker->error.empty()
                                ? worker->error
                                : last_error_line(worker_log_path(o_.output_dir, p.name));
    job_failed(job, why, code == 4 || code == 128 + SIGKILL, !worker, log);
  }
  put_record(job.index, r);
  timings_->write();
  write_record();
}

void NodeBatch::job_done(NodeJob& job, BatchLog& log) {
  const double seconds = seconds_since(job.start);
  JobOutcome& out = outcomes_[job.index];
  out.status = JobOutcome::Status::done;
  out.message.clear();
  job.record.status = "done";
  ++finished_;
  measured_ += seconds;
  predicted_done_ += job.seconds;
  log.say(job_head(job.index, jobs_.size(), jobs_[job.index].name) + ": done in " +
          clock_time(seconds) + " on instance " + std::to_string(job.record.instance) +
          ", peak RSS " + format_bytes(job.record.measured_peak_bytes) + " (predicted " +
          format_bytes(job.record.predicted_peak_bytes) + ")");
}

// A worker that died or ran out of memory: its job waits to run again, alone, leanest plan.
void NodeBatch::retry_alone(NodeJob job, BatchLog& log) {
  remove_stale_temporaries(o_.output_dir);  // what the dead worker was writing
  InstanceJobRecord& r = job.record;
  log.say(job_head(job.index, jobs_.size(), jobs_[job.index].name) + ": worker " + r.exit +
          " after " + clock_time(seconds_since(job.start)) +
          "; retrying once, alone, with the leanest plan (" + format_bytes(job.lean_peak) + ")");
  r.status = "waiting";
  r.message = "attempt 1: " + r.exit;
  job.retry = true;
  job.pid = 0;
  put_record(job.index, r);
  waiting_.push_back(std::move(job));
  write_record();
}

void NodeBatch::job_failed(NodeJob& job, const std::string& why, bool out_of_memory,
                           bool unrecorded, BatchLog& log) {
  InstanceJobRecord& r = job.record;
  JobOutcome& out = outcomes_[job.index];
  out.status = JobOutcome::Status::failed;
  out.out_of_memory = out_of_memory;
  out.message =
      text::safe_text(why.empty() ? "worker " + r.exit : why + " (worker " + r.exit + ")");
  if (unrecorded) timings_->job_failed(jobs_[job.index].name, out.message);
  r.status = "failed";
  r.message = out.message;
  ++finished_;
  log.say(job_failed_line(job_head(job.index, jobs_.size(), jobs_[job.index].name), out.message));
}

void NodeBatch::finish_search(SearchTask& task, int status, std::size_t max_rss, BatchLog& log) {
  slot_busy_[task.slot] = false;
  const double seconds = seconds_since(task.start);
  const int code = exit_code_of(status);
  for (std::size_t j : task.jobs) {
    SearchTaskRecord& r = record_.jobs[record_of_[j]].search;
    r.end_seconds = seconds_since(start_);
    r.measured_peak_bytes = max_rss;
    r.exit = describe_exit(status);
    r.status = code == 0 ? "done" : stop_signal_ != 0 ? "interrupted" : "failed";
  }
  if (code == 0) {
    searched_seconds_ += seconds;
    searched_residues_ += task.residues;
    for (std::size_t j : task.jobs) {
      search_seconds_[jobs_[j].name] = seconds / static_cast<double>(task.jobs.size());
      for (NodeJob& waiting : waiting_) {
        if (waiting.index == j) waiting.awaiting_search = false;
      }
    }
    log.say(search_head(task) + ": search done in " + clock_time(seconds) + ", peak RSS " +
            format_bytes(max_rss) + " (counted " + format_bytes(search_bytes()) + ")");
    if (max_rss > search_bytes()) {
      log.say(
          "warning: the search used more memory than --search-memory " +
          format_bytes(o_.search_memory) +
          " counts for it: raise --search-memory, or the folds beside it may run out of memory");
    }
  } else if (stop_signal_ == 0) {
    const std::string why = last_error_line(
        search_log_path(o_.output_dir, task.whole_batch ? "" : jobs_[task.jobs.front()].name));
    for (std::size_t j : task.jobs) search_failed(j, why, status, log);
  }
  write_record();
}

// A failed search fails its job's fold too; the other jobs go on.
void NodeBatch::search_failed(std::size_t job, const std::string& why, int status, BatchLog& log) {
  const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                               [&](const NodeJob& j) { return j.index == job; });
  if (it == waiting_.end()) return;
  InstanceJobRecord& r = it->record;
  JobOutcome& out = outcomes_[job];
  const int code = exit_code_of(status);
  out.status = JobOutcome::Status::failed;
  out.out_of_memory = code == 4 || code == 128 + SIGKILL;
  out.program_failed = code == 6;
  out.message = text::safe_text("search: " + (why.empty() ? describe_exit(status) : why) +
                                " (search worker " + describe_exit(status) + ")");
  r.status = "failed";
  r.message = out.message;
  put_record(job, r);
  timings_->job_failed(jobs_[job].name, out.message);
  ++finished_;
  waiting_.erase(it);
  log.say(job_failed_line(job_head(job, jobs_.size(), jobs_[job].name), out.message));
}

// The job's record as `r` says, with the search's (kept in record_ only) left as it is.
void NodeBatch::put_record(std::size_t job, const InstanceJobRecord& r) {
  InstanceJobRecord& into = record_.jobs[record_of_[job]];
  SearchTaskRecord search = std::move(into.search);
  into = r;
  into.search = std::move(search);
}

void NodeBatch::reap(BatchLog& log) {
  while (const std::optional<WorkerExit> w = reap_worker()) {
    const auto it = std::find_if(running_.begin(), running_.end(),
                                 [&](const NodeJob& j) { return j.pid == w->pid; });
    if (it != running_.end()) {
      NodeJob job = std::move(*it);
      running_.erase(it);
      finish(job, w->status, w->max_rss_bytes, log);
      continue;
    }
    const auto search = std::find_if(searches_running_.begin(), searches_running_.end(),
                                     [&](const SearchTask& t) { return t.pid == w->pid; });
    if (search == searches_running_.end()) continue;  // not ours
    SearchTask task = std::move(*search);
    searches_running_.erase(search);
    finish_search(task, w->status, w->max_rss_bytes, log);
  }
}

void NodeBatch::stop_workers(BatchLog& log) {
  log.say("stopping: signal " + std::to_string(stop_signal_) + " (" + strsignal(stop_signal_) +
          "); " + std::to_string(running_.size() + searches_running_.size()) +
          " worker(s) told to stop, " + std::to_string(waiting_.size()) +
          " job(s) not started; a rerun resumes");
  for (const NodeJob& j : running_) ::kill(j.pid, SIGTERM);
  for (const SearchTask& t : searches_running_) ::kill(t.pid, SIGTERM);
  for (const SearchTask& t : searches_waiting_) {
    for (std::size_t j : t.jobs) record_.jobs[record_of_[j]].search.status = "interrupted";
  }
  searches_waiting_.clear();
  for (NodeJob& j : waiting_) {
    outcomes_[j.index].message = "not started: the batch was stopped";
    j.record.status = "interrupted";
    put_record(j.index, j.record);
  }
  waiting_.clear();
  write_record();
}

void NodeBatch::progress_line(BatchLog& log) {
  last_progress_ = Clock::now();
  const double elapsed = seconds_since(start_);
  std::size_t done = 0, failed = 0;
  for (const InstanceJobRecord& r : record_.jobs) {
    done += r.status == "done";
    failed += r.status == "failed";
  }
  double left = 0;
  for (const NodeJob& j : waiting_) left += predicted_seconds(j, j.retry);
  for (const NodeJob& j : running_) left += std::max(0.0, j.seconds - seconds_since(j.start));
  left /= layout_.instances;
  if (predicted_done_ > 0) left *= measured_ / predicted_done_;  // what the runs so far showed
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f proteins/h", elapsed > 0 ? done * 3600.0 / elapsed : 0.0);
  std::string searches;
  if (!searches_running_.empty() || !searches_waiting_.empty()) {
    searches = std::to_string(searches_running_.size()) + " searching, " +
               std::to_string(searches_waiting_.size()) + " search(es) waiting, ";
  }
  log.say("progress: " + std::to_string(finished_) + "/" + std::to_string(to_run_) + " finished (" +
          std::to_string(done) + " done, " + std::to_string(failed) + " failed), " +
          std::to_string(running_.size()) + " running, " + searches + rate + ", " +
          eta_text(elapsed, left));
}

void NodeBatch::schedule(BatchLog& log) {
  constexpr double kProgressSeconds = 30, kStopGraceSeconds = 30;
  StopSignals signals;
  Clock::time_point stop_time;
  bool killed = false;
  while (!waiting_.empty() || !running_.empty() || !searches_running_.empty()) {
    if (StopSignals::received() != 0 && stop_signal_ == 0) {
      stop_signal_ = StopSignals::received();
      stop_time = Clock::now();
      stop_workers(log);
    }
    if (stop_signal_ != 0 && !killed && seconds_since(stop_time) > kStopGraceSeconds) {
      for (const NodeJob& j : running_) ::kill(j.pid, SIGKILL);  // a worker that hangs
      for (const SearchTask& t : searches_running_) ::kill(t.pid, SIGKILL);
      killed = true;
    }
    if (stop_signal_ == 0) {
      while (admit_one(log)) {
      }
      if (running_.empty() && searches_running_.empty() && !waiting_.empty()) {
        throw InternalError("the scheduler cannot start " + jobs_[waiting_.front().index].name +
                            (waiting_.front().awaiting_search ? "'s search" : "") +
                            " on an idle node");
      }
    }
    reap(log);
    if (seconds_since(last_progress_) >= kProgressSeconds) progress_line(log);
    if (stop_signal_ != 0 && running_.empty() && searches_running_.empty()) {
      // Workers stopped mid-write leave their temporaries (never a torn file): tidy them.
      remove_stale_temporaries(o_.output_dir);
      remove_stale_temporaries(job_logs_dir(o_.output_dir));
      if (!o_.databases.empty()) remove_stale_search_scratch(searched_msa_dir(o_.output_dir));
    }
    const timespec pause{0, 100'000'000};
    ::nanosleep(&pause, nullptr);
  }
}

void NodeBatch::write_record() {
  try {
    write_batch_record(o_.output_dir / "batch.json", record_);
  } catch (const std::exception& e) {
    if (o_.progress) o_.progress(std::string("warning: batch.json not written: ") + e.what());
  }
}

void NodeBatch::start_lines(const std::vector<std::string>& warnings, BatchLog& log) const {
  log.say(batch_start_line(CPUFOLD_VERSION, jobs_.size(), o_.input, o_.output_dir));
  for (const std::string& w : warnings) log.say("warning: " + w);
  std::vector<int> models;
  for (int i = 0; i < o_.num_models; ++i) models.push_back(o_.model_order[i]);
  log.say(batch_settings_line({model_type_name(o_.model_type), models, o_.num_seeds, o_.random_seed,
                               o_.num_recycle, rank_ == RankBy::ptm, true}));
  std::string cores;
  for (const CoreSlot& s : slots_) cores += (cores.empty() ? "" : " ") + cpu_list(s.cpus);
  log.say("instances: " + layout_.why + "; cores " + cores + "; memory budget " +
          format_bytes(budget_.bytes) + " (" + budget_.source + "); " + std::to_string(to_run_) +
          " job(s) to run; time model: " + machine_time_model().source);
}

PredictSummary NodeBatch::summary(BatchLog& log) {
  try {
    timings_->write();
  } catch (const std::exception& e) {
    log.say(std::string("warning: timings.json not written: ") + e.what());
  }
  write_record();
  PredictSummary s;
  for (const JobOutcome& out : outcomes_) s.add(out);
  s.stopped_by_signal = stop_signal_;
  log.say(batch_summary_line(s.count(JobOutcome::Status::done),
                             s.count(JobOutcome::Status::skipped),
                             s.count(JobOutcome::Status::failed), seconds_since(start_)));
  for (const JobOutcome& job : s.failures) log.say(failed_job_line(job.name, job.message));
  if (stop_signal_ != 0) {
    log.say("stopped by signal " + std::to_string(stop_signal_) + ": " +
            std::to_string(s.count(JobOutcome::Status::interrupted)) +
            " job(s) unfinished; rerun the same command to resume");
  }
  return s;
}

PredictSummary NodeBatch::run(const std::vector<std::string>& warnings) {
  cores_ = node_cores();
  // The scheduler stays resident beside its workers: what it holds is not theirs to plan with.
  const std::size_t own = os_current_rss_bytes();
  budget_.bytes = budget_.bytes > own ? budget_.bytes - own : 0;
  budget_.source += ", less this scheduler's " + format_bytes(own);
  plan_jobs_on_node();
  layout_ = choose_layout();
  if (layout_.instances <= 1 || waiting_.empty()) {
    PredictOptions one = o_;
    one.instances = 1;
    one.threads = layout_.threads;
    omp_set_num_threads(layout_.threads);
    if (o_.progress) o_.progress("instances: " + layout_.why + ": running in this process");
    // run_jobs searches every job first, as without --instances.
    return run_jobs(one, std::move(jobs_), rank_, std::move(params_), warnings);
  }
  slots_ = core_slots(cores_, layout_.instances, layout_.threads);
  slot_busy_.assign(slots_.size(), false);
  record_.instances = layout_.instances;
  record_.threads_per_instance = layout_.threads;
  record_.layout_reason = layout_.why;
  record_.budget_bytes = budget_.bytes;
  record_.budget_source = budget_.source;
  queue_searches();
  timings_ = std::make_unique<TimingsFile>(o_.output_dir / "timings.json");
  std::vector<std::string> done;
  for (const JobOutcome& out : outcomes_) {
    if (out.status == JobOutcome::Status::skipped) done.push_back(out.name);
  }
  timings_->recover(
      done, [&](const std::string& job) { return worker_timings_path(o_.output_dir, job); });
  BatchLog log(o_.output_dir / "log.txt", o_.progress);
  start_ = Clock::now();
  last_progress_ = start_;
  start_lines(warnings, log);
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    if (outcomes_[i].status == JobOutcome::Status::failed)
      log.say(job_failed_line(job_head(i, jobs_.size(), jobs_[i].name), outcomes_[i].message));
    if (outcomes_[i].status == JobOutcome::Status::skipped)
      log.say(job_head(i, jobs_.size(), jobs_[i].name) + ": skipped, already done");
  }
  write_record();
  schedule(log);
  return summary(log);
}

}  // namespace

bool wants_instances(const PredictOptions& o) {
  if (!o.worker_job.empty() || o.instances == 1) return false;
  return o.instances > 1 || o.threads_per_instance > 0 || o.threads == 0;
}

PredictSummary run_instances(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
                             std::map<int, fs::path> params,
                             const std::vector<std::string>& warnings) {
  NodeBatch batch(o, std::move(jobs), rank, std::move(params));
  return batch.run(warnings);
}

}  // namespace cpufold
