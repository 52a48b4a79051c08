#include "pipeline/runner/model_runner.h"

#include <omp.h>

#include "memory/numa_tier.h"
#include "memory/peak_tracker.h"
#include "memory/spill_dir.h"
#include "memory/system_memory.h"
#include "pipeline/runner/ensemble_buffers.h"
#include "pipeline/runner/prediction_heads.h"
#include "pipeline/runner/recycling_run.h"

namespace cpufold {
namespace {

void check_run_options(const FeatureSource& source, const RunOptions& o) {
  if (o.recycles < 0) throw InputError("the number of recycles must be >= 0");
  if (o.ensemble < 1) throw InputError("the ensemble size must be >= 1");
  if (source.iterations < (o.recycles + 1) * o.ensemble) {
    throw InputError("the features hold " + std::to_string(source.iterations) +
                     " feature sample(s); " + std::to_string(o.recycles) + " recycles with " +
                     std::to_string(o.ensemble) + " ensemble member(s) need " +
                     std::to_string((o.recycles + 1) * o.ensemble));
  }
}

// The cache the members' Linears take their weights from while they are built.
std::unique_ptr<WeightCache> make_weight_cache(const WeightStore& store, DType precision) {
  auto cache = WeightCache::for_parameters(store.path(), precision);
  cache->set_source(store.bytes(), [&store] { store.drop_resident_pages(); });
  return cache;
}

// The parameters' root scope, its Linears packed into (or mapped from) `cache`, in f32 unless a
// module says otherwise (the trunk's stacks).
ParamScope root_scope(const WeightStore& store, WeightCache* cache) {
  return ParamScope(store, "", -1, 0, {cache});
}

}  // namespace

ModelRunner::ModelRunner(const WeightStore& store, const ModelConfig& config, DType precision)
    : weight_cache_(make_weight_cache(store, precision)),
      precision_(precision),
      trunk_(root_scope(store, weight_cache_.get()), config, precision),
      structure_module_(root_scope(store, weight_cache_.get()), config),
      heads_(std::make_unique<PredictionHeads>(root_scope(store, weight_cache_.get()), config)) {
  weight_cache_->finish();
  residency_ = weight_cache_->residency();
  params_file_ = store.path();
  // Every parameter a Linear does not pack is copied by its module, as f32.
  const auto all = static_cast<std::size_t>(store.parameter_count()) * sizeof(float);
  const std::size_t packed_plain = weight_cache_->unpacked_bytes();
  residency_.private_bytes += all > packed_plain ? all - packed_plain : 0;
}

ModelRunner::~ModelRunner() = default;

Prediction ModelRunner::run(const FeatureSource& source, const RunOptions& o) const {
  check_run_options(source, o);
  return run_recycling({*this, trunk_, structure_module_, *heads_}, source, o);
}

BufferList<IterationStructure> IterationStructure::buffers(std::int64_t n) {
  return {{&IterationStructure::atom_positions, DType::f32, Shape{n, 37, 3}},
          {&IterationStructure::atom_mask, DType::f32, Shape{n, 37}},
          {&IterationStructure::plddt, DType::f32, Shape{n}}};
}

BufferList<FinalStructureBuffers> FinalStructureBuffers::buffers(std::int64_t n) {
  using F = FinalStructureBuffers;
  return {{&F::atom_positions, DType::f32, Shape{n, 37, 3}},
          {&F::atom_mask, DType::f32, Shape{n, 37}},
          {&F::atom14_positions, DType::f32, Shape{n, 14, 3}},
          {&F::affine_tensor, DType::f32, Shape{n, 7}},
          {&F::rot_mats, DType::f32, Shape{n, 3, 3}},
          {&F::trans, DType::f32, Shape{n, 3}},
          {&F::previous_ca, DType::f32, Shape{n, 3}}};
}

RunArenas ModelRunner::arena_bytes(const TrunkDims& d, std::size_t features_bytes,
                                   const RunOptions& o, const ChunkSizes& chunks,
                                   bool apart) const {
  const ModelConfig& c = trunk_.config();
  const std::int64_t n = d.n_res;
  RunArenas a;
  a.features = features_bytes;
  a.outputs = trunk_.state_bytes(d) + StructureModuleOutputs::bytes(c, n) +
              FinalStructureBuffers::buffers(n).bytes() +
              (o.ensemble > 1 ? EnsembleBuffers::bytes(d, c) : 0) +
              (o.keep_iterations ? IterationStructure::bytes(n) * (o.recycles + 1) : 0);
  // The iteration's phases one after the other in one stack (recycling_run.cpp): the trunk's,
  // then what it leaves (masks, MSA representation) under the structure module's transients or
  // under the heads' outputs and transients.
  // Apart, the MSA representation and the head outputs go to the activations arena instead.
  const TrunkBytes t = trunk_.forward_bytes(d, chunks, apart, o.tracer != nullptr);
  const std::size_t head_outputs = heads_->output_bytes(d.n_seq, n);
  a.scratch =
      std::max({t.scratch, t.retained + structure_module_.scratch_bytes(n, chunks.structure),
                t.retained + (apart ? 0 : head_outputs) + heads_->scratch_bytes(d.n_seq, n)});
  if (apart) {
    a.activations = std::max(t.activations, trunk_.msa_bytes(d) + head_outputs);
    a.activations_window = trunk_.msa_window_bytes(d, chunks);
    a.outputs_window = trunk_.pair_window_bytes(d, chunks);
  }
  return a;
}

MemoryPlan ModelRunner::plan(const TrunkDims& d, std::size_t features_bytes,
                             const RunOptions& o) const {
  check_residue_count(d.n_res, trunk_.config().c_z);
  PlanRequest request;
  request.chunks = o.chunks;
  request.budget = o.mem_budget;
  request.shared_weight_bytes = residency_.shared_bytes;
  request.private_weight_bytes = residency_.private_bytes + o.other_weight_bytes;
  request.time = machine_time_model();
  request.compute_gflops =
      request.time.run_gflops(omp_get_max_threads(), precision_ == DType::bf16);
  request.spill_traffic = [&](const ChunkSizes& chunks, bool outputs, std::size_t cache) {
    return trunk_.spill_traffic_bytes(d, chunks, outputs, cache);
  };
  // What the process holds already is usable by this run too; 0 (unknown) stays unknown.
  if (const std::size_t usable = usable_memory_bytes(); usable > 0)
    request.usable_bytes = usable + os_current_rss_bytes();
  // A spill directory in RAM (tmpfs) frees nothing: its plans would only look leaner.
  if (o.spill_numa_node) {
    request.may_spill = true;
    request.spill_free_bytes = numa_node_free_bytes(*o.spill_numa_node);
    request.spill_where = "NUMA node " + std::to_string(*o.spill_numa_node);
    request.spill_streams_weights = false;
  } else if (o.spill_dir && spill_dir_in_memory(*o.spill_dir)) {
    request.spill_unused = spill_dir_unused_reason(*o.spill_dir);
  } else if (o.spill_dir) {
    request.may_spill = true;
    request.spill_free_bytes = spill_free_bytes(*o.spill_dir);
    request.spill_where = o.spill_dir->string();
  }
  return plan_run(trunk_.config(), d, request, [&](const ChunkSizes& chunks, bool apart) {
    return arena_bytes(d, features_bytes, o, chunks, apart);
  });
}

TrunkDims ModelRunner::dims_of(const FeatureSource& source) const {
  Arena features("plan-features", dram_tier(), source.bytes_per_iteration);
  return Trunk::dims_of(source.read(0, features), trunk_.config());
}

}  // namespace cpufold
