#include "pipeline/runner/instance_layout.h"

#include <algorithm>
#include <cstdio>

#include "memory/error.h"

namespace cpufold {

double thread_speedup(const InstanceScaling& s, int threads) {
  // s2 = 1 / ((1 - p) + p / 2)  =>  p = 2 (1 - 1 / s2).
  const double s2 = std::clamp(s.two_thread_speedup, 1.0, 2.0);
  const double p = 2 * (1 - 1 / s2);
  return 1 / ((1 - p) + p / std::max(threads, 1));
}

double side_by_side_slowdown(const InstanceScaling& s, int instances, int threads, int cores) {
  if (instances <= 1 || cores <= threads) return 1;
  const double others = static_cast<double>(instances - 1) * threads / (cores - threads);
  return 1 + (std::max(s.side_by_side, 1.0) - 1) * std::min(others, 1.0);
}

double run_seconds(const InstanceScaling& s, double flops, DType precision, int threads,
                   int instances, int cores) {
  const double rate =
      s.gflops * 1e9 * (precision == DType::bf16 ? s.bf16_speedup : 1) * thread_speedup(s, threads);
  return flops / rate * side_by_side_slowdown(s, instances, threads, cores);
}

InstanceLayout make_layout(const InstanceScaling& s, int instances, int threads, int cores) {
  InstanceLayout l;
  l.instances = instances;
  l.threads = threads;
  l.throughput =
      instances * thread_speedup(s, threads) / side_by_side_slowdown(s, instances, threads, cores);
  char why[160];
  std::snprintf(why, sizeof why, "%d instance(s) x %d thread(s): %.2fx one thread's throughput",
                instances, threads, l.throughput);
  l.why = why;
  return l;
}

InstanceLayout fixed_layout(const InstanceScaling& s, int cores, int max_instances, int instances,
                            int threads) {
  cores = std::max(cores, 1);
  max_instances = std::max(max_instances, 1);
  if (instances > 0 && threads > 0) {
    if (instances * threads > cores) {
      throw InputError("--instances " + std::to_string(instances) + " x --threads-per-instance " +
                       std::to_string(threads) + " needs " + std::to_string(instances * threads) +
                       " cores; this process may use " + std::to_string(cores) +
                       " (one per physical core): lower either");
    }
    return make_layout(s, instances, threads, cores);
  }
  if (instances > 0) {
    if (instances > cores) {
      throw InputError("--instances " + std::to_string(instances) + " needs at least as many " +
                       "cores; this process may use " + std::to_string(cores));
    }
    return make_layout(s, instances, cores / instances, cores);
  }
  if (threads > 0) {
    if (threads > cores) {
      throw InputError("--threads-per-instance " + std::to_string(threads) + " exceeds the " +
                       std::to_string(cores) + " core(s) this process may use");
    }
    return make_layout(s, std::min(cores / threads, max_instances), threads, cores);
  }
  return make_layout(s, 1, cores, cores);
}

}  // namespace cpufold
