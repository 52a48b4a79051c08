#include "pipeline/batch/node_sizing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "memory/byte_size.h"
#include "pipeline/batch/admission.h"
#include "pipeline/batch/batch_progress.h"

namespace cpufold {
namespace {

struct Running {
  double end = 0;
  std::size_t bytes = 0;
  int slots = 1;
  bool alone = false;
};

// The node the replay runs on: its instances and how a job's time shrinks with more of them.
struct PaperNode {
  std::size_t room = 0, shared = 0;
  InstanceLayout layout;
  const InstanceScaling* scaling = nullptr;
};

// Whether no other waiting job fits beside one of `bytes` (the scheduler then gives it every
// free instance: instance_batch's runs_alone_now).
bool alone_now(const std::vector<JobDemand>& waiting, std::size_t job, std::size_t free,
               std::size_t bytes) {
  const std::size_t after = free > bytes ? free - bytes : 0;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (i != job && !waiting[i].alone && waiting[i].peak_bytes <= after) return false;
  }
  return true;
}

// Runs the admission loop against a clock (jobs longest first); returns the makespan and sets
// the peak of the running jobs' plans.
double replay(std::vector<JobDemand> waiting, const PaperNode& n, std::size_t& peak) {
  std::vector<Running> running;
  std::size_t used = 0;
  int busy = 0;
  double now = 0;
  peak = 0;
  while (!waiting.empty() || !running.empty()) {
    NodeState node{n.room > used ? n.room - used : 0, n.layout.instances - busy,
                   static_cast<int>(running.size()), running.empty() ? 0 : 1e300};
    for (const Running& r : running)
      node.next_end_seconds = std::min(node.next_end_seconds, r.end - now);
    const bool held =
        std::any_of(running.begin(), running.end(), [](const Running& r) { return r.alone; });
    if (const auto a = held ? std::nullopt : next_admission(waiting, node)) {
      const JobDemand& j = waiting[a->job];
      const std::size_t bytes = a->lean ? j.lean_peak_bytes : j.peak_bytes;
      const int slots =
          j.alone || alone_now(waiting, a->job, node.free_bytes, bytes) ? node.free_slots : 1;
      const double speedup = thread_speedup(*n.scaling, n.layout.threads * slots) /
                             thread_speedup(*n.scaling, n.layout.threads);
      running.push_back(
          {now + (a->lean ? j.lean_seconds : j.seconds) / speedup, bytes, slots, j.alone});
      used += bytes;
      busy += slots;
      peak = std::max(peak, n.shared + used);
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(a->job));
      continue;
    }
    if (running.empty()) break;  // cannot happen for jobs that fit the room
    const auto first =
        std::min_element(running.begin(), running.end(),
                         [](const Running& a, const Running& b) { return a.end < b.end; });
    now = first->end;
    used -= first->bytes;
    busy -= first->slots;
    running.erase(first);
  }
  return now;
}

// Instance counts worth simulating: 1, 2, 4, ... and cores / T for T up to 8, within `most`.
std::vector<int> instance_counts(int cores, int most) {
  std::vector<int> counts;
  for (int k = 1; k <= most; k *= 2) counts.push_back(k);
  for (int t = 1; t <= 8; ++t) {
    if (cores / t >= 1 && cores / t <= most) counts.push_back(cores / t);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

}  // namespace

NodeSizing size_node(std::span<const JobPlan> plans, int cores, std::size_t memory, DType precision,
                     const InstanceScaling& scaling, int instances, int threads) {
  NodeSizing out;
  out.cores = cores;
  out.memory = memory;
  std::size_t shared = 0, largest = 1;
  std::vector<const JobPlan*> fit;
  for (const JobPlan& p : plans) {
    ++out.jobs;
    if (!p.error.empty() || !p.plan.fits || worker_budget_bytes(p.plan.dram_peak_bytes) > memory) {
      ++out.unfit;
      continue;
    }
    fit.push_back(&p);
    shared = std::max(shared, shared_weight_bytes(p.plan));
    largest = std::max(largest,
                       worker_budget_bytes(p.plan.dram_peak_bytes) - shared_weight_bytes(p.plan));
  }
  const std::size_t room = memory > shared ? memory - shared : 0;
  const int by_memory = static_cast<int>(std::clamp<std::size_t>(room / largest, 1, 1 << 16));
  const int most = std::min(by_memory, std::max(1, static_cast<int>(fit.size())));
  std::vector<InstanceLayout> layouts;
  if (instances > 0 || threads > 0) {
    layouts.push_back(fixed_layout(scaling, cores, most, instances, threads));
  } else {
    for (int k : instance_counts(cores, std::min(most, cores)))
      layouts.push_back(make_layout(scaling, k, cores / k, cores));
  }
  out.makespan_seconds = -1;
  for (const InstanceLayout& l : layouts) {
    std::vector<JobDemand> jobs;
    double serial = 0;
    for (const JobPlan* p : fit) {
      JobDemand d;
      const double relative = p->plan.chosen.relative_time;
      d.seconds = d.lean_seconds =
          run_seconds(scaling, p->flops, precision, l.threads, l.instances, cores) * relative;
      d.peak_bytes = d.lean_peak_bytes =
          worker_budget_bytes(p->plan.dram_peak_bytes) - shared_weight_bytes(p->plan);
      d.alone = p->plan.spill_bytes > 0;
      jobs.push_back(d);
      serial += run_seconds(scaling, p->flops, precision, cores, 1, cores) * relative;
    }
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const JobDemand& a, const JobDemand& b) { return a.seconds > b.seconds; });
    std::size_t peak = 0;
    const double makespan = replay(std::move(jobs), {room, shared, l, &scaling}, peak);
    if (out.makespan_seconds < 0 || makespan < out.makespan_seconds * (1 - 1e-9)) {
      out.layout = l;
      out.makespan_seconds = makespan;
      out.peak_bytes = peak;
      out.serial_seconds = serial;
    }
  }
  if (out.makespan_seconds > 0)
    out.proteins_per_hour = static_cast<double>(fit.size()) * 3600 / out.makespan_seconds;
  out.makespan_seconds = std::max(out.makespan_seconds, 0.0);
  return out;
}

std::string node_sizing_text(std::span<const JobPlan> plans, int cores, std::size_t memory,
                             DType precision, const InstanceScaling& scaling) {
  const NodeSizing n = size_node(plans, cores, memory, precision, scaling);
  char line[512];
  std::string out =
      "\nnode of " + std::to_string(cores) + " cores and " + format_bytes(memory) + ":\n";
  std::snprintf(line, sizeof line,
                "  %d instance(s) x %d thread(s); %zu job(s) (%zu do not fit)\n"
                "  predicted makespan %s, %.1f proteins/hour; peak memory %s\n"
                "  one job after another with all %d cores: %s (%.2fx the makespan)\n",
                n.layout.instances, n.layout.threads, n.jobs, n.unfit,
                clock_time(n.makespan_seconds).c_str(), n.proteins_per_hour,
                format_bytes(n.peak_bytes).c_str(), cores, clock_time(n.serial_seconds).c_str(),
                n.makespan_seconds > 0 ? n.serial_seconds / n.makespan_seconds : 0.0);
  out += line;
  out += "  with fewer cores (same memory):\n";
  for (const int c : {cores / 4, cores / 2}) {
    if (c < 1 || c == cores) continue;
    const NodeSizing s = size_node(plans, c, memory, precision, scaling);
    std::snprintf(line, sizeof line, "    %4d cores: %d x %d, makespan %s, %.1f proteins/hour\n", c,
                  s.layout.instances, s.layout.threads, clock_time(s.makespan_seconds).c_str(),
                  s.proteins_per_hour);
    out += line;
  }
  out += "  run times: the time model's rate per core on this machine's CPU (" +
         std::string(scaling.gflops > 0 ? "" : "unknown ") +
         "`cpufold bench calibrate` measures it), scaled by threads (Amdahl) and by the slowdown "
         "of instances side by side\n";
  return out;
}

std::string slurm_time(double seconds) {
  const auto minutes = static_cast<long>(std::ceil(std::max(seconds, 60.0) / 60));
  char text[32];
  std::snprintf(text, sizeof text, "%ld-%02ld:%02ld:00", minutes / 1440, minutes / 60 % 24,
                minutes % 60);
  return text;
}

}  // namespace cpufold
