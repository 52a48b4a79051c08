// One AF2 prediction end to end (AF2 Alg. 2): the recycling loop over trunk and structure
// module, then the heads. Owns the model (weights converted once) and plans every arena
// from the model configuration and the feature sizes before anything runs.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evoformer/trunk.h"
#include "ops/weight_cache.h"
#include "pipeline/features/feature_source.h"
#include "pipeline/runner/run_plan.h"
#include "pipeline/runner/shared_run_options.h"
#include "structure/structure_module.h"

namespace cpufold {

class PredictionHeads;
struct Prediction;

// One run's options: the shared ones (chunks, budget, spill) and what the caller decides.
struct RunOptions : SharedRunOptions {
  std::int64_t recycles = 3;
  // Stop recycling once the RMS change of the CA-CA distance matrix between two iterations
  // falls below this (Å); <= 0: never (AF2 monomer's default).
  double early_stop_tolerance = 0;
  // AF2 ensembling (num_ensemble): trunk passes per iteration, each on its own feature sample
  // (the source must hold (recycles + 1) * ensemble), pair / single / first MSA row averaged.
  std::int64_t ensemble = 1;
  // Weights of other models the caller keeps loaded beside this one (they count in the plan).
  std::size_t other_weight_bytes = 0;
  // Off: no checkpoints even with spill_dir (a caller that keeps per-iteration results, which
  // a resumed run would miss). A tracer and keep_iterations turn them off too.
  bool checkpoints = true;
  // The caller's settings that change the run's outcome beyond these options (stop_when's
  // score): part of the checkpoint key.
  std::string checkpoint_context;
  Tracer* tracer = nullptr;
  // One plain line per stage (sizes and plan, each iteration's times); callers add context.
  std::function<void(const std::string&)> progress;
  // When set, the heads run after every iteration (not only the last) and this decides from
  // that iteration's outputs whether recycling stops there (ColabFold's --stop-at-score).
  std::function<bool(const Prediction&)> stop_when;
  // Keep every iteration's structure and pLDDT in Prediction::kept_iterations (ColabFold's
  // --save-recycles); the heads then run after every iteration, and the plan counts the copies.
  bool keep_iterations = false;
  // Called as each stage begins ("features", "trunk", "structure", "heads"; a stage recurs
  // once per iteration) and with "done" at the end, so a caller can measure each stage
  // (`cpufold profile`).
  std::function<void(std::string_view stage)> on_stage;
  // Called as each phase of the trunk begins (RunContext::on_phase), within "trunk".
  std::function<void(std::string_view phase)> on_trunk_phase;
  // Called as each module of a trunk block begins and with "" as the block ends
  // (RunContext::on_module), so that `cpufold bench model --modules` can time them.
  std::function<void(std::string_view module)> on_module;
};

struct StageTime {
  std::string stage;
  double seconds;
};

// One iteration's structure and confidence (RunOptions::keep_iterations), in Prediction::arena.
struct IterationStructure {
  Tensor atom_positions;  // f32 [n_res, 37, 3]
  Tensor atom_mask;       // f32 [n_res, 37]
  Tensor plddt;           // f32 [n_res]
  // The one list keep_iteration() allocates and the plan sizes.
  static BufferList<IterationStructure> buffers(std::int64_t n_res);
  static std::size_t bytes(std::int64_t n_res) { return buffers(n_res).bytes(); }
};

// The run's final structure (Prediction::final_*) and the previous iteration's CA positions
// [n_res, 3] that the early stop compares with: the run allocates them in the outputs arena, the
// plan sizes them, from this one list.
struct FinalStructureBuffers {
  Tensor atom_positions;    // [n_res, 37, 3]
  Tensor atom_mask;         // [n_res, 37]
  Tensor atom14_positions;  // [n_res, 14, 3]
  Tensor affine_tensor;     // [n_res, 7]
  Tensor rot_mats;          // [n_res, 3, 3]
  Tensor trans;             // [n_res, 3]
  Tensor previous_ca;       // [n_res, 3]
  static BufferList<FinalStructureBuffers> buffers(std::int64_t n_res);
};

// Every output, named as in the reference's outputs/ group; views into `arena` and `scratch`.
struct Prediction {
  std::unique_ptr<Tier> spill_tier;    // the files under --spill-dir, when the plan spills
  std::unique_ptr<Arena> arena;        // what persists across iterations: pair, single, atoms, ...
  std::unique_ptr<Arena> scratch;      // the last iteration's MSA representation and head outputs
  std::unique_ptr<Arena> activations;  // those two instead, when the plan spills them
  Tensor msa, msa_first_row, pair, single;
  StructureModuleOutputs sm;
  Tensor final_atom14_positions, final_atom_positions, final_atom_mask;
  Tensor final_affine_tensor, final_rot_mats, final_trans;
  Tensor lddt_logits, plddt, distogram_logits, masked_msa_logits, experimentally_resolved_logits;
  bool has_pae = false;  // the model has the PAE / pTM head
  Tensor tm_logits, aligned_confidence_probs, predicted_aligned_error;
  float max_predicted_aligned_error = 0, ptm_score = 0;
  std::int64_t iterations = 0;  // iterations run (recycles + 1 unless stopped early)
  std::vector<IterationStructure> kept_iterations;  // with RunOptions::keep_iterations
  std::vector<StageTime> timings;
  std::size_t planned_bytes = 0;  // all arenas
  MemoryPlan plan;                // what the planner predicted and chose
  std::size_t peak_rss_bytes = 0;
};

class ModelRunner {
 public:
  // Builds the model with its Linear weights in a WeightCache for store's file (mapped and
  // shared; see ops/weight_cache.h). Afterwards nothing reads the store's values; callers
  // may release them (WeightStore::release_values). precision: the compute precision of the
  // trunk's stacks (ops/compute_precision.h: resolve_precision); the rest runs in f32.
  ModelRunner(const WeightStore& store, const ModelConfig& config, DType precision = DType::f32);
  ~ModelRunner();

  const ModelConfig& config() const { return trunk_.config(); }
  DType precision() const { return precision_; }

  // The weights this model keeps: the packed Linear weights mapped from the shared cache
  // file, and private bytes (Linear weights when no cache could be written, plus every
  // other parameter, which modules copy: LayerNorm, embedders, IPA).
  WeightResidency weight_residency() const { return residency_; }
  // The cache file of the Linear weights (empty when there is none).
  const std::filesystem::path& weight_cache_file() const { return weight_cache_->file(); }
  // Faults in every page of the shared weights (WeightCache::make_resident): what a run holds
  // by its peak, for a caller that runs only part of the model (`profile --blocks-only`).
  void make_weights_resident() const { weight_cache_->make_resident(); }
  // The trunk, whose blocks a blocks-only profile runs alone.
  const Trunk& trunk() const { return trunk_; }
  // The parameter file the model was built from.
  const std::filesystem::path& params_file() const { return params_file_; }

  // Throws InputError when the source holds fewer than options.recycles + 1 iterations, and
  // BudgetError when options.mem_budget is given and no plan fits it.
  Prediction run(const FeatureSource& features, const RunOptions& options) const;

  // The arenas of a run with these sizes and options (ensemble, tracer, kept iterations) at
  // these chunks; `apart`: the activations in their own arena.
  RunArenas arena_bytes(const TrunkDims& dims, std::size_t features_bytes, const RunOptions& o,
                        const ChunkSizes& chunks, bool apart) const;
  // The memory plan run() would follow for features of these sizes, without running the model.
  MemoryPlan plan(const TrunkDims& dims, std::size_t features_bytes,
                  const RunOptions& options) const;
  // Bytes this model's weights keep resident (weight_residency's shared and private bytes;
  // the shared mapping counts in full: it is resident in this process).
  std::size_t weight_bytes() const { return residency_.shared_bytes + residency_.private_bytes; }
  // Sizes of the first iteration's features.
  TrunkDims dims_of(const FeatureSource& features) const;

 private:
  // First member: the Linears of the members below view its mapping.
  std::unique_ptr<WeightCache> weight_cache_;
  DType precision_;
  Trunk trunk_;
  StructureModule structure_module_;
  std::unique_ptr<PredictionHeads> heads_;
  WeightResidency residency_;
  std::filesystem::path params_file_;
};

}  // namespace cpufold
