// The memory plan of one model run: for each candidate chunk size, the arenas the run would
// take (from the modules' own byte counts, the same ones the run allocates with), what the
// process holds already (code, libraries, weights) and a time estimate; memory/memory_plan picks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "evoformer/trunk.h"
#include "memory/memory_plan.h"
#include "pipeline/runner/time_model.h"

namespace cpufold {

// The arenas of one run, in bytes.
struct RunArenas {
  std::size_t features = 0;  // one iteration's trunk inputs
  std::size_t outputs = 0;   // what persists across iterations: pair, single, structure outputs
  std::size_t scratch = 0;   // an iteration's phases: activations, head outputs, transients
  // With the activations apart (spilled): the templates' pair activations, the extra-MSA and
  // MSA representations and the head outputs, no longer in `scratch`.
  std::size_t activations = 0;
  // DRAM the staged passes over spilled tensors hold (memory/spill_window.h): over the
  // activations (MSA representations) and over the outputs (pair representation).
  std::size_t activations_window = 0;
  std::size_t outputs_window = 0;

  std::size_t total() const { return features + outputs + scratch + activations; }
  // What stays in DRAM with the activations and the outputs spilled.
  std::size_t spilled_dram() const {
    return features + scratch + activations_window + outputs_window;
  }
};

// How much of a run goes to the spill tier.
enum class SpillLevel {
  none,
  activations,  // the activations arena (template pairs, extra-MSA and MSA representations, heads)
  outputs,      // that and the outputs arena (the pair representation above all)
};

// Plan block names the run looks for to place its arenas.
inline constexpr const char* kOutputsBlock = "outputs arena";
inline constexpr const char* kActivationsBlock = "activations arena";
inline constexpr const char* kSpillWindowBlock =
    "spill window (the slabs of spilled tensors being read or written)";
// The spill level a candidate plan stands for.
SpillLevel spill_level(const PlanCandidate& candidate);

// The DRAM a spilled candidate leaves over for spilled tensors the kernel may cache whole
// (FileTier::set_cache_bytes): `budget` (else the memory `usable`) less its peak, plus its spill
// window, which a cached tensor does not use.
std::size_t spill_cache_bytes(const PlanCandidate& c, std::optional<std::size_t> budget,
                              std::size_t usable);

struct PlanRequest {
  std::optional<ChunkSizes> chunks;   // fixed by the caller; empty: the planner chooses
  std::optional<std::size_t> budget;  // --mem-budget; empty: the usable memory is the limit
  // Weights resident during the run: this model's mapping of the shared weight cache (resident
  // in this process, counted once per node), and what is private (copies, other models).
  std::size_t shared_weight_bytes = 0;
  std::size_t private_weight_bytes = 0;
  std::size_t usable_bytes = 0;  // usable memory (memory/system_memory); 0: unknown
  // --spill-dir was given: candidates may spill, up to the free space there (0: unknown).
  bool may_spill = false;
  std::size_t spill_free_bytes = 0;
  std::string spill_where = "the spill directory";  // for the plan's notes
  // Why the --spill-dir given is not used (it is in RAM); "" otherwise. Becomes the plan's
  // spill note, so its text and a refusal say so.
  std::string spill_unused;
  // The spill tier is files: under a memory limit the weight cache's pages are dropped and
  // read back like the spilled arenas', so a spilled plan counts about two blocks' weights.
  // Not so for a NUMA node (its pages are not the kernel's to drop).
  bool spill_streams_weights = true;
  // Predicted time of each candidate over the fastest's (machine_time_model() in a run).
  TimeModel time = builtin_time_model();
  // The run's compute rate in GFLOP/s (from `time`, the threads and the precision): a spilled
  // candidate's time adds its spill traffic over time.spill_bandwidth to its compute time.
  // 0: unknown; spilled candidates take time.spill_factor instead.
  double compute_gflops = 0;
  // Bytes an iteration moves to and from the spill tier with these chunks, the outputs spilled
  // too or not, when the plan leaves `cache_bytes` of DRAM over for spilled tensors
  // (Trunk::spill_traffic_bytes); empty: none.
  std::function<std::size_t(const ChunkSizes& chunks, bool outputs_spilled,
                            std::size_t cache_bytes)>
      spill_traffic;
  // The families' shares of the run's time; empty: family_shares() of the run's sizes.
  std::optional<FamilyShares> shares;
};

// The longest chain cpufold can run: the pair representation is N² rows, and oneDNN's matmul
// takes at most 2^31 - 1 rows (INT32_MAX), which a Linear over the whole pair must stay under.
inline constexpr std::int64_t kMaxResidues = 46'340;
// InputError naming the limit, its reason and the pair's size when n_res > kMaxResidues.
void check_residue_count(std::int64_t n_res, std::int64_t c_z);

// Chunk sizes the planner weighs for each family, unsliced first.
inline constexpr std::int64_t kChunkCandidates[] = {0, 256, 128, 64, 32, 16, 8, 4, 2, 1};

// The chunks of kChunkCandidates that slice a family at these sizes (a chunk covering every
// axis the family slices is its unsliced plan again), unsliced first.
std::vector<std::int64_t> family_chunks(ChunkFamily family, const TrunkDims& d);

// Each family's share of a run's time: its FLOPs (pipeline/runner/model_flops), the embedders
// with the Evoformer, the heads with the structure module.
FamilyShares family_shares(const ModelConfig& config, const TrunkDims& d);

// The process without weights or arenas: code, libraries, OpenMP threads, heap, and oneDNN's
// primitives and jit code, which grow with the model's depth. Measured (README, "Memory").
std::size_t process_bytes(const ModelConfig& config);

// Time slack of the default choice: the leanest plan within 3% of the fastest.
inline constexpr double kPlanTimeSlack = 0.03;

// The plan of one run; `arenas(chunks, activations_apart)` gives a candidate's arenas. Without a
// chunk in `r`, the candidates are, for each peak level a family's transients set, the fastest
// chunk of every family that stays under it; so no family is sliced finer than the peak needs.
MemoryPlan plan_run(const ModelConfig& config, const TrunkDims& d, const PlanRequest& r,
                    const std::function<RunArenas(const ChunkSizes& chunks, bool apart)>& arenas);

}  // namespace cpufold
