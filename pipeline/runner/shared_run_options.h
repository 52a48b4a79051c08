// The options every command that runs the model shares, as the command line's one table of
// them (pipeline/cli/common_options.cpp) sets them. RunOptions and the commands' own option
// structs (EvaluateOptions, PredictOptions, ProfileRequest) derive from it, so an option shared
// by predict, evaluate, plan and profile is a field here and an entry in that table: nothing
// copies it from one struct to the next.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "memory/chunk_sizes.h"
#include "memory/dtype.h"

namespace cpufold {

struct SharedRunOptions {
  // Rows per attention / outer-product slice, per family; empty: the memory planner chooses
  // (the leanest plan within a few percent of the fastest, or what fits mem_budget).
  std::optional<ChunkSizes> chunks;
  // Refuse the run (BudgetError, exit 4) before any model work unless its plan fits this.
  std::optional<std::size_t> mem_budget;
  // Directory for the spill tier and per-iteration checkpoints: when no plan held in DRAM fits,
  // the planner may place the largest arenas in files mapped there (memory/file_tier.h); after
  // every iteration but the last, the state the next one starts from is written there, and a
  // run that finds its own checkpoint resumes after it (pipeline/runner/run_checkpoint.h).
  // Empty: neither.
  std::optional<std::filesystem::path> spill_dir;
  // The spill tier on this NUMA node (memory/numa_tier.h) instead of files under spill_dir,
  // which then holds only the checkpoints. The budget bounds what stays off that node.
  std::optional<int> spill_numa_node;
  // The trunk stacks' compute precision, resolved for this CPU: what load_model builds the
  // model in (a run computes in its model's precision).
  DType precision = DType::f32;
  // OpenMP threads; 0: all cores. The command line sets them for the process; records say it.
  int threads = 0;

  // --chunk-size: the one chunk of every family when they are uniform.
  std::optional<std::int64_t> uniform_chunk() const {
    if (!chunks || !chunks->uniform()) return std::nullopt;
    return chunks->evoformer;
  }
};

}  // namespace cpufold
