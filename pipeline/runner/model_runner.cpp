#include "pipeline/runner/model_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "memory/byte_size.h"
#include "memory/file_tier.h"
#include "memory/numa_tier.h"
#include "memory/peak_tracker.h"
#include "memory/spill_dir.h"
#include "memory/system_memory.h"
#include "memory/tensor_copy.h"
#include "pipeline/runner/prediction_heads.h"
#include "pipeline/runner/run_checkpoint.h"
#include "structure/atom_builder.h"
#include "structure/rigid.h"

namespace cpufold {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr std::int64_t kAtom37Ca = 1;

// RMS change of the CA-CA distance matrix between two iterations (ColabFold's early-stop
// measure; invariant to the frame the structure happens to be built in).
double ca_distance_change(const Tensor& ca_prev, const Tensor& atom37) {
  const std::int64_t n = atom37.dim(0);
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double d_now = 0, d_prev = 0;
      for (std::int64_t x = 0; x < 3; ++x) {
        const double a = atom37.at<float>({i, kAtom37Ca, x}) - atom37.at<float>({j, kAtom37Ca, x});
        const double b = ca_prev.at<float>({i, x}) - ca_prev.at<float>({j, x});
        d_now += a * a;
        d_prev += b * b;
      }
      const double diff = std::sqrt(d_now) - std::sqrt(d_prev);
      sum += diff * diff;
    }
  }
  return std::sqrt(sum / static_cast<double>(n * n));
}

void copy_ca(const Tensor& atom37, const Tensor& ca) {
  copy_tensor(atom37.select(1, kAtom37Ca), ca);
}

// final_rot_mats [n, 3, 3] and final_trans [n, 3] from the tensor-7 frames.
void split_frames(const Tensor& frames7, const Tensor& rot, const Tensor& trans) {
  for (std::int64_t i = 0; i < frames7.dim(0); ++i) {
    const Rigid r = Rigid::from_tensor_7(&frames7.at<float>({i, 0}));
    for (int a = 0; a < 3; ++a) {
      trans.at<float>({i, a}) = r.trans(a);
      for (int b = 0; b < 3; ++b) rot.at<float>({i, a, b}) = r.rot(a, b);
    }
  }
}

// The extra state of an ensembled iteration: the recycled inputs every member starts from, the
// sums of the averaged representations and the first member's MSA representation.
struct EnsembleBuffers {
  Tensor prev_first_row, prev_pair, first_row, pair, single, msa;

  static std::size_t bytes(const TrunkDims& d, const ModelConfig& c) {
    return 2 * (f32_bytes({d.n_res, c.c_m}) + f32_bytes({d.n_res, d.n_res, c.c_z})) +
           f32_bytes({d.n_res, c.c_s}) + f32_bytes({d.n_seq + d.n_templ, d.n_res, c.c_m});
  }
  static EnsembleBuffers allocate(const TrunkDims& d, const ModelConfig& c, Arena& arena) {
    EnsembleBuffers b;
    b.prev_first_row = arena.allocate(DType::f32, {d.n_res, c.c_m});
    b.prev_pair = arena.allocate(DType::f32, {d.n_res, d.n_res, c.c_z});
    b.first_row = arena.allocate(DType::f32, {d.n_res, c.c_m});
    b.pair = arena.allocate(DType::f32, {d.n_res, d.n_res, c.c_z});
    b.single = arena.allocate(DType::f32, {d.n_res, c.c_s});
    b.msa = arena.allocate(DType::f32, {d.n_seq + d.n_templ, d.n_res, c.c_m});
    return b;
  }
  void save_recycled(const TrunkState& s) const {
    copy_tensor(s.msa_first_row, prev_first_row);
    copy_tensor(s.pair, prev_pair);
  }
  void restore_recycled(TrunkState& s) const {
    copy_tensor(prev_first_row, s.msa_first_row);
    copy_tensor(prev_pair, s.pair);
  }
  void accumulate(const TrunkState& s, std::int64_t member) const {
    if (member == 0) {
      copy_tensor(s.msa_first_row, first_row);
      copy_tensor(s.pair, pair);
      copy_tensor(s.single, single);
      copy_tensor(s.msa, msa);
      return;
    }
    add(s.msa_first_row, first_row);
    add(s.pair, pair);
    add(s.single, single);
  }
  void average_into(TrunkState& s, std::int64_t members) const {
    const auto count = static_cast<float>(members);
    divide(first_row, count, s.msa_first_row);
    divide(pair, count, s.pair);
    divide(single, count, s.single);
    copy_tensor(msa, s.msa);
  }

 private:
  // Both contiguous f32 arena tensors of one shape.
  static void add(const Tensor& x, const Tensor& sum) {
    const float* a = x.data_as<float>();
    float* b = sum.data_as<float>();
    for (std::int64_t i = 0; i < sum.numel(); ++i) b[i] += a[i];
  }
  static void divide(const Tensor& sum, float count, const Tensor& dst) {
    const float* a = sum.data_as<float>();
    float* b = dst.data_as<float>();
    for (std::int64_t i = 0; i < dst.numel(); ++i) b[i] = a[i] / count;
  }
};

// One run of the recycling loop (AF2 Alg. 2), phase by phase: plan every arena from the first
// iteration's sizes, allocate the outputs, then per iteration the trunk (with its ensemble),
// the structure module and the stop checks; the heads last.
class RecyclingRun {
 public:
  RecyclingRun(const ModelRunner& runner, const Trunk& trunk,
               const StructureModule& structure_module, const PredictionHeads& heads,
               const FeatureSource& source, const RunOptions& o)
      : runner_(runner),
        trunk_(trunk),
        structure_module_(structure_module),
        heads_(heads),
        source_(source),
        o_(o),
        c_(trunk.config()),
        features_("features", dram_tier(), source.bytes_per_iteration) {}

  Prediction execute() {
    plan();
    allocate_outputs();
    for (std::int64_t k = resume(); k <= o_.recycles; ++k) {
      const RunContext ctx{p_.scratch.get(),    chunks_.structure,    o_.tracer,
                           static_cast<int>(k), p_.activations.get(), &o_.on_trunk_phase};
      const double trunk_s = trunk_pass(k, ctx);
      const double structure_s = structure_pass(ctx);
      p_.iterations = k + 1;
      if (stops_after(k, trunk_s, structure_s)) break;
      copy_ca(p_.final_atom_positions, ca_prev_);
      if (checkpoint_ && k < o_.recycles) checkpoint_->save(recycled_state());
    }
    if (!heads_current_) timed_heads();  // outputs of the last iteration
    if (checkpoint_) checkpoint_->remove();
    p_.timings = {{"features", t_features_},
                  {"trunk", t_trunk_},
                  {"structure", t_structure_},
                  {"heads", t_heads_},
                  {"total", seconds_since(start_)}};
    stage("done");
    p_.peak_rss_bytes = os_peak_rss_bytes();
    return std::move(p_);
  }

 private:
  void say(const std::string& msg) const {
    if (o_.progress) o_.progress(msg);
  }
  void stage(std::string_view name) const {
    if (o_.on_stage) o_.on_stage(name);
  }

  // Every arena sized from the first iteration's features before anything runs, by the plan;
  // a budget the plan cannot meet stops the run here.
  void plan() {
    stage("features");
    in_ = source_.read(0, features_);
    d_ = Trunk::dims_of(in_, c_);
    p_.plan = runner_.plan(d_, features_.capacity(), o_);
    if (!p_.plan.fits) {
      if (o_.mem_budget) refuse_plan(p_.plan, "this run (N_res " + std::to_string(d_.n_res) + ")");
      say("warning: the leanest plan needs " + format_bytes(p_.plan.dram_peak_bytes) +
          ", more than the " + format_bytes(p_.plan.usable_bytes) +
          " of memory available now; the run may be killed");
    }
    chunks_ = p_.plan.chosen.chunks;
    const SpillLevel spill = spill_level(p_.plan.chosen);
    const RunArenas a = runner_.arena_bytes(d_, features_.capacity(), o_.ensemble, chunks_,
                                            spill != SpillLevel::none, o_.tracer != nullptr);
    if (spill != SpillLevel::none) {
      std::string where;
      if (o_.spill_numa_node) {
        p_.spill_tier = std::make_unique<NumaTier>(*o_.spill_numa_node);
        where = "NUMA node " + std::to_string(*o_.spill_numa_node);
      } else {
        p_.spill_tier = std::make_unique<FileTier>(*o_.spill_dir);
        where = o_.spill_dir->string();
      }
      say("spilling " + format_bytes(p_.plan.spill_bytes) + " to " + where + " (" + p_.plan.why +
          ")");
    }
    Tier& outputs_tier = spill == SpillLevel::outputs ? *p_.spill_tier : dram_tier();
    p_.arena = std::make_unique<Arena>("prediction", outputs_tier, a.outputs);
    p_.scratch = std::make_unique<Arena>("scratch", dram_tier(), a.scratch);
    if (spill != SpillLevel::none)
      p_.activations = std::make_unique<Arena>("activations", *p_.spill_tier, a.activations);
    p_.planned_bytes = a.total();
  }

  void allocate_outputs() {
    const std::int64_t n = d_.n_res;
    Arena& out = *p_.arena;
    state_ = trunk_.allocate_state(d_, out);
    p_.sm = StructureModuleOutputs::allocate(out, c_, n);
    p_.final_atom_positions = out.allocate(DType::f32, {n, 37, 3});
    p_.final_atom_mask = out.allocate(DType::f32, {n, 37});
    p_.final_atom14_positions = out.allocate(DType::f32, {n, 14, 3});
    p_.final_affine_tensor = out.allocate(DType::f32, {n, 7});
    p_.final_rot_mats = out.allocate(DType::f32, {n, 3, 3});
    p_.final_trans = out.allocate(DType::f32, {n, 3});
    ca_prev_ = out.allocate(DType::f32, {n, 3});
    say("N_res " + std::to_string(n) + ", " + std::to_string(d_.n_seq) + " MSA rows, " +
        std::to_string(d_.n_extra) + " extra rows, " + std::to_string(d_.n_templ) + " templates; " +
        describe_chunk_sizes(chunks_) + "; predicted peak " +
        format_bytes(p_.plan.dram_peak_bytes) + " (arenas " + format_bytes(p_.planned_bytes) + ")");
    // Outputs are views of the trunk state: they hold the latest iteration's values.
    p_.msa_first_row = state_.msa_first_row;
    p_.pair = state_.pair;
    p_.single = state_.single;
    if (o_.ensemble > 1) ens_.emplace(EnsembleBuffers::allocate(d_, c_, out));
  }

  // With a spill dir: this exact run's checkpoint (every feature sample is read once to key
  // it) and the iteration to start from, after the checkpoint's or 0.
  std::int64_t resume() {
    if (!o_.spill_dir || !o_.checkpoints) return 0;
    if (o_.tracer) {
      say("no checkpoints: the trace records every iteration");
      return 0;
    }
    const auto t = Clock::now();
    features_.release_to(0);
    // The compute precision changes every number: a bf16 run never resumes an fp32 one.
    const std::string context =
        o_.checkpoint_context + "; precision " + std::string(dtype_name(runner_.precision()));
    std::string key = run_checkpoint_key({runner_.params_file(), &c_, o_.recycles, o_.ensemble,
                                          o_.early_stop_tolerance, chunks_, context},
                                         source_, features_);
    in_ = source_.read(0, features_);
    checkpoint_.emplace(*o_.spill_dir, runner_.params_file().stem().string(), std::move(key),
                        o_.progress);
    RecycledState s = recycled_state();
    const std::int64_t first = checkpoint_->resume(s, o_.recycles + 1);
    p_.iterations = s.iterations;
    t_features_ = s.seconds.features + seconds_since(t);
    t_trunk_ = s.seconds.trunk;
    t_structure_ = s.seconds.structure;
    t_heads_ = s.seconds.heads;
    return first;
  }
  // What the next iteration starts from (views of the run's tensors).
  RecycledState recycled_state() const {
    return {p_.iterations, state_.msa_first_row,
            state_.pair,   state_.prev_pseudo_beta,
            ca_prev_,      {t_features_, t_trunk_, t_structure_, t_heads_}};
  }

  // Iteration k's feature sample for ensemble member e (the first is read by plan()).
  void read_features(std::int64_t k, std::int64_t e) {
    stage("features");
    const auto t = Clock::now();
    features_.release_to(0);
    in_ = source_.read(k * o_.ensemble + e, features_);
    const TrunkDims now = Trunk::dims_of(in_, c_);
    if (now.n_res != d_.n_res ||
        (o_.ensemble > 1 && (now.n_seq != d_.n_seq || now.n_templ != d_.n_templ)))
      throw InputError("features change size between iterations");
    t_features_ += seconds_since(t);
  }

  // AF2 ensembling: every member starts from the same recycled inputs and sees its own
  // feature sample (k * ensemble + e); pair, single and the first MSA row are averaged, the
  // MSA representation is the first member's. Returns the trunk's seconds.
  double trunk_pass(std::int64_t k, const RunContext& ctx) {
    double seconds = 0;
    for (std::int64_t e = 0; e < o_.ensemble; ++e) {
      if (k > 0 || e > 0) read_features(k, e);
      if (ens_) {
        if (e == 0) {
          ens_->save_recycled(state_);
        } else {
          ens_->restore_recycled(state_);
        }
      }
      stage("trunk");
      const auto t = Clock::now();
      // The previous pass's MSA representation, masks and head outputs go: each pass's
      // activations reuse the same scratch.
      p_.scratch->release_to(0);
      if (p_.activations) p_.activations->release_to(0);
      trunk_.forward(in_, state_, ctx, chunks_);
      p_.msa = state_.msa.slice(0, 0, d_.n_seq);
      seconds += seconds_since(t);
      if (ens_) ens_->accumulate(state_, e);
    }
    if (ens_) ens_->average_into(state_, o_.ensemble);
    t_trunk_ += seconds;
    return seconds;
  }

  // The structure module and the atoms; returns its seconds.
  double structure_pass(const RunContext& ctx) {
    stage("structure");
    const auto t = Clock::now();
    const std::int64_t last = c_.n_structure_layers - 1;
    structure_module_.forward(state_.single, state_.pair, in_.aatype, in_.seq_mask, p_.sm, ctx);
    atom14_to_atom37(p_.sm.positions.select(0, last), in_.aatype, p_.final_atom_positions,
                     p_.final_atom_mask);
    // AF2 Alg. 2: the next iteration sees this one's pseudo-beta positions.
    pseudo_beta_from_atom37(in_.aatype, p_.final_atom_positions, state_.prev_pseudo_beta);
    const double seconds = seconds_since(t);
    t_structure_ += seconds;
    return seconds;
  }

  void run_heads() {
    const std::int64_t last = c_.n_structure_layers - 1;
    copy_tensor(p_.sm.positions.select(0, last), p_.final_atom14_positions);
    copy_tensor(p_.sm.frames.select(0, last), p_.final_affine_tensor);
    split_frames(p_.final_affine_tensor, p_.final_rot_mats, p_.final_trans);
    // Above the MSA representation, until the next iteration's trunk pass.
    const RunContext ctx{p_.scratch.get(), chunks_.structure, o_.tracer, 0, p_.activations.get()};
    heads_.allocate_outputs(p_, ctx.activation_arena(), d_.n_seq, d_.n_res);
    heads_.forward(p_, in_.seq_mask, ctx);
  }
  void timed_heads() {
    stage("heads");
    const auto t = Clock::now();
    run_heads();
    heads_current_ = true;
    t_heads_ += seconds_since(t);
  }

  // The iteration's progress line, and whether recycling stops here: the caller's
  // after_iteration (which sees the heads' outputs) or the CA distance change.
  bool stops_after(std::int64_t k, double trunk_s, double structure_s) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "iteration %lld of %lld: trunk %.2f s, structure %.2f s",
                  static_cast<long long>(k + 1), static_cast<long long>(o_.recycles + 1), trunk_s,
                  structure_s);
    std::string line = msg;
    heads_current_ = false;
    if (o_.after_iteration) {
      timed_heads();
      if (o_.after_iteration(p_, k)) {
        say(line + ": score reached, recycling stops");
        return true;
      }
    }
    if (k > 0 && o_.early_stop_tolerance > 0) {
      const double change = ca_distance_change(ca_prev_, p_.final_atom_positions);
      std::snprintf(msg, sizeof msg, ", CA distance change %.3f A", change);
      line += msg;
      if (change < o_.early_stop_tolerance) {
        say(line + " < tolerance: recycling stops");
        return true;
      }
    }
    say(line);
    return false;
  }

  const ModelRunner& runner_;
  const Trunk& trunk_;
  const StructureModule& structure_module_;
  const PredictionHeads& heads_;
  const FeatureSource& source_;
  const RunOptions& o_;
  const ModelConfig& c_;
  const Clock::time_point start_ = Clock::now();
  Arena features_;
  TrunkInputs in_;
  TrunkDims d_;
  ChunkSizes chunks_;  // the plan's
  Prediction p_;
  TrunkState state_;
  Tensor ca_prev_;
  std::optional<EnsembleBuffers> ens_;
  std::optional<RunCheckpoint> checkpoint_;
  bool heads_current_ = false;  // the heads have seen the latest iteration
  double t_features_ = 0, t_trunk_ = 0, t_structure_ = 0, t_heads_ = 0;
};

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

}  // namespace

namespace {

// The cache the members' Linears take their weights from while they are built.
std::unique_ptr<WeightCache> begin_weight_cache(const WeightStore& store, DType precision) {
  auto cache = WeightCache::for_parameters(store.path(), precision);
  cache->set_source(store.bytes(), [&store] { store.drop_resident_pages(); });
  cache->begin();
  return cache;
}

}  // namespace

ModelRunner::ModelRunner(const WeightStore& store, const ModelConfig& config, DType precision)
    : weight_cache_(begin_weight_cache(store, precision)),
      precision_(precision),
      trunk_(store, config, precision),
      structure_module_(store, config),
      heads_(std::make_unique<PredictionHeads>(store, config)) {
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
  return RecyclingRun(*this, trunk_, structure_module_, *heads_, source, o).execute();
}

RunArenas ModelRunner::arena_bytes(const TrunkDims& d, std::size_t features_bytes,
                                   std::int64_t ensemble, const ChunkSizes& chunks, bool apart,
                                   bool tracing) const {
  const ModelConfig& c = trunk_.config();
  const std::int64_t n = d.n_res;
  RunArenas a;
  a.features = features_bytes;
  a.outputs = trunk_.state_bytes(d) + StructureModuleOutputs::bytes(c, n) + f32_bytes({n, 37, 3}) +
              f32_bytes({n, 37}) + f32_bytes({n, 14, 3}) + f32_bytes({n, 7}) +
              f32_bytes({n, 3, 3}) + 2 * f32_bytes({n, 3}) +
              (ensemble > 1 ? EnsembleBuffers::bytes(d, c) : 0);
  // The iteration's phases one after the other in one stack (see RecyclingRun): the trunk's,
  // then what it leaves (masks, MSA representation) under the structure module's transients or
  // under the heads' outputs and transients.
  // Apart, the MSA representation and the head outputs go to the activations arena instead.
  const TrunkBytes t = trunk_.forward_bytes(d, chunks, apart, tracing);
  const std::size_t head_outputs = heads_->output_bytes(d.n_seq, n);
  a.scratch =
      std::max({t.scratch, t.retained + structure_module_.scratch_bytes(n, chunks.structure),
                t.retained + (apart ? 0 : head_outputs) + heads_->scratch_bytes(d.n_seq, n)});
  if (apart) a.activations = std::max(t.activations, trunk_.msa_bytes(d) + head_outputs);
  return a;
}

MemoryPlan ModelRunner::plan(const TrunkDims& d, std::size_t features_bytes,
                             const RunOptions& o) const {
  PlanRequest request;
  request.chunks = o.chunks;
  request.budget = o.mem_budget;
  request.shared_weight_bytes = residency_.shared_bytes;
  request.private_weight_bytes = residency_.private_bytes + o.other_weight_bytes;
  request.time = machine_time_model();
  // What the process holds already is usable by this run too; 0 (unknown) stays unknown.
  if (const std::size_t usable = usable_memory_bytes(); usable > 0)
    request.usable_bytes = usable + os_current_rss_bytes();
  // A spill directory in RAM (tmpfs) frees nothing: its plans would only look leaner.
  if (o.spill_numa_node) {
    request.may_spill = true;
    request.spill_free_bytes = numa_node_free_bytes(*o.spill_numa_node);
    request.spill_where = "NUMA node " + std::to_string(*o.spill_numa_node);
    request.spill_streams_weights = false;
  } else if (o.spill_dir && !spill_dir_in_memory(*o.spill_dir)) {
    request.may_spill = true;
    request.spill_free_bytes = spill_free_bytes(*o.spill_dir);
    request.spill_where = o.spill_dir->string();
  }
  return plan_run(trunk_.config(), d, request, [&](const ChunkSizes& chunks, bool apart) {
    return arena_bytes(d, features_bytes, o.ensemble, chunks, apart, o.tracer != nullptr);
  });
}

TrunkDims ModelRunner::dims_of(const FeatureSource& source) const {
  Arena features("plan-features", dram_tier(), source.bytes_per_iteration);
  return Trunk::dims_of(source.read(0, features), trunk_.config());
}

}  // namespace cpufold
