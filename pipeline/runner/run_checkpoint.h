// Per-iteration checkpoints of a recycling run (issue 10.6): with --spill-dir, the state the
// next iteration starts from is written after every completed iteration, so a run killed midway
// and rerun with the same command resumes there and gives bit-identical outputs.
//
// A checkpoint is a blob cache file (io/blob_cache_file.h: written atomically with fsync and
// rename; magic, format version, key and checksums) in the spill directory, named by the
// model and a hash of its key. The key is the text of everything that changes the run's
// numbers (run_checkpoint_key); a truncated, corrupt, foreign or stale file is reported by
// load() and the run starts from scratch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "io/model_config.h"
#include "memory/arena.h"
#include "memory/chunk_sizes.h"
#include "memory/tensor.h"
#include "pipeline/features/feature_source.h"

namespace cpufold {

struct StageSeconds {
  double features = 0, trunk = 0, structure = 0, heads = 0;
};

// What the next iteration starts from, after `iterations` completed ones; tensors are views
// into the run's arenas (load() fills them, so their shapes must be the run's). Nothing else
// crosses iterations: the trunk rewrites the MSA and single representations from the
// features, the structure module its outputs, and an ensemble's buffers start afresh at
// every iteration from the recycled state.
struct RecycledState {
  std::int64_t iterations = 0;
  Tensor msa_first_row, pair, prev_pseudo_beta;
  Tensor ca_prev;        // CA positions of the last iteration, for the early-stop check
  StageSeconds seconds;  // accumulated before the checkpoint
};

// What a run's numbers depend on besides the features.
struct RunIdentity {
  std::filesystem::path params;  // by content (io/file_identity.h)
  const ModelConfig* config = nullptr;
  std::int64_t recycles = 0, ensemble = 1;
  double early_stop_tolerance = 0;
  ChunkSizes chunks;    // the plan's
  std::string context;  // the caller's (RunOptions::checkpoint_context)
};

// The key of a run: `id`, this process's numerics (OpenMP threads, oneDNN version and ISA,
// row kernels) and a hash of every feature sample the run reads ((recycles + 1) x ensemble).
// The samples are read into `features` one at a time from its current mark, which is
// restored afterwards.
std::string run_checkpoint_key(const RunIdentity& id, const FeatureSource& source, Arena& features);

class RunCheckpoint {
 public:
  using Progress = std::function<void(const std::string&)>;
  // The file in `dir` for `key`, named "STEM.HASH.checkpoint"; `progress` sees resume() and
  // save()'s messages (warnings go to stderr without it). Removes temporaries that killed
  // writers left in `dir`.
  RunCheckpoint(const std::filesystem::path& dir, std::string_view stem, std::string key,
                Progress progress = {});

  const std::filesystem::path& file() const { return file_; }

  // Replaces the file with `state` atomically. When it cannot be written (a full disk), warns
  // once and writes no more checkpoints: the run goes on without them.
  void save(const RecycledState& state);

  struct Load {
    bool loaded = false;
    std::string problem;  // why an existing file was not used; empty when there was none
  };
  // Fills `into` from the file when it exists, is intact, has this key and matches the
  // shapes of `into`; otherwise leaves `into` as it was.
  Load load(RecycledState& into) const;

  // load() for a run of `iterations` iterations, with its messages: the resume line
  // ("resuming after iteration 2 of 4 from FILE") or the warning why an existing file is
  // ignored. Returns the iteration to start from: after the checkpoint's, or 0.
  std::int64_t resume(RecycledState& into, std::int64_t iterations) const;

  // Deletes the file (the run completed); a missing file is fine.
  void remove() const;

 private:
  void warn(const std::string& message) const;

  std::filesystem::path file_;
  std::string key_;
  Progress progress_;
  bool failed_ = false;  // a save failed: no more saves
};

}  // namespace cpufold
