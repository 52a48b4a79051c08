// Instances × threads on a node, from the time model's InstanceScaling: how fast a run goes on
// T threads beside other instances, and which layout folds a batch fastest.
#pragma once

#include <cstddef>
#include <string>

#include "memory/dtype.h"
#include "pipeline/runner/time_model.h"

namespace cpufold {

// One instance's speed on `threads` threads over the same on one (Amdahl's law fitted to the
// measured two-thread speedup).
double thread_speedup(const InstanceScaling& s, int threads);

// Each instance's slowdown when `instances` of `threads` threads share `cores` cores (1 alone,
// s.side_by_side when every core runs an instance of one thread; linear in between).
double side_by_side_slowdown(const InstanceScaling& s, int instances, int threads, int cores);

// Predicted seconds of a run of `flops` in `precision` on `threads` threads, one of `instances`.
double run_seconds(const InstanceScaling& s, double flops, DType precision, int threads,
                   int instances, int cores);

struct InstanceLayout {
  int instances = 1;
  int threads = 1;
  double throughput = 0;  // runs per unit time, relative to one instance on one thread
  std::string why;        // one line for the log and `plan`
};

// `instances` x `threads` on `cores` and its throughput.
InstanceLayout make_layout(const InstanceScaling& s, int instances, int threads, int cores);

// The layout for a fixed instance count and/or threads per instance: the other follows from
// `cores` (instances: cores / threads, at most `max_instances`); neither fixed: one instance on
// every core. InputError when instances x threads exceeds `cores`. Choosing a free layout is
// node_sizing's (a replay of the batch), not this.
InstanceLayout fixed_layout(const InstanceScaling& s, int cores, int max_instances, int instances,
                            int threads);

}  // namespace cpufold
