// The planner's time model: how much slower a run gets with a smaller chunk, or with its
// activations in the spill tier, relative to the fastest plan. Built in from measurements on
// one machine; `cpufold bench calibrate` measures this machine and saves a table that every
// later plan on a CPU of the same model and oneDNN ISA uses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "memory/chunk_sizes.h"

namespace cpufold {

enum class SpillLevel;

// Each family's share of a run's time (any unit; only the ratios count).
struct FamilyShares {
  double templates = 0, extra_msa = 0, evoformer = 1, structure = 0;
};

// How fast whole runs go, and how instances side by side slow each other: what the batch
// scheduler needs to choose instances × threads and to predict a batch's makespan.
struct InstanceScaling {
  double gflops = 0;              // FLOP rate of a whole fp32 run, one thread, alone
  double bf16_speedup = 1;        // a bf16 run's rate over fp32's
  double two_thread_speedup = 1;  // one instance on 2 threads over the same on 1
  double side_by_side = 1;        // each instance's time when every core runs one, over alone
};

struct TimeModel {
  // Time of one Evoformer block with this chunk over the unsliced block's, by chunk (0:
  // unsliced, 1.0). The template stack and the structure module take these factors too.
  std::map<std::int64_t, double> chunk_factor;
  // The same for one extra-MSA block, whose outer product mean recomputes a projection of all
  // its rows for every slab; empty: chunk_factor.
  std::map<std::int64_t, double> extra_msa_chunk_factor;
  double spill_activations = 1;  // run time with the activations arena spilled, over DRAM
  double spill_outputs = 1;      // with the outputs arena spilled too
  // What moving a byte to or from the spill tier adds to a run, as bytes per second of run
  // time: a spilled pass's reads, writes and their system calls, less what overlaps compute.
  double spill_bandwidth = 1.1e9;
  InstanceScaling instances;
  std::string cpu;  // CPU model name the factors were measured on
  std::string isa;  // oneDNN's effective ISA then
  int threads = 0;
  std::string source;  // one line for the plan: where the factors come from

  // Never below 1. A chunk not measured takes the factor of the nearest larger one measured.
  double relative_time(ChunkFamily family, std::int64_t chunk) const;
  // A run's: the families' factors weighted by their shares.
  double relative_time(const ChunkSizes& chunks, const FamilyShares& shares) const;
  double spill_factor(SpillLevel level) const;
  // GFLOP/s of a run on `threads` threads (fp32, or bf16), from `instances`.
  double run_gflops(int threads, bool bf16) const;
};

// The factors measured when the planner was written (AMD EPYC, AVX-512, 2 threads).
TimeModel builtin_time_model();

// This CPU's model name (/proc/cpuinfo) and oneDNN's effective ISA.
std::string this_cpu();
std::string this_isa();

// Where the calibration is kept: $CPUFOLD_TIME_MODEL, else time_model.json in
// $CPUFOLD_CACHE_DIR, $XDG_CACHE_HOME/cpufold or ~/.cache/cpufold.
std::filesystem::path time_model_path();

// The saved calibration when it was measured on this CPU model and ISA; otherwise the built-in
// model, whose `source` says why the file was not used (absent, for another CPU, unreadable).
TimeModel load_time_model(const std::filesystem::path& path);

// The model plans use in this process (loaded once from time_model_path()).
const TimeModel& machine_time_model();

// Writes `model` as JSON, atomically. Throws InputError when the file cannot be written.
void save_time_model(const TimeModel& model, const std::filesystem::path& path);

}  // namespace cpufold
