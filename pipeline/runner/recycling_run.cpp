#include "pipeline/runner/recycling_run.h"

#include <chrono>
#include <cstdio>
#include <optional>

#include "memory/byte_size.h"
#include "memory/peak_tracker.h"
#include "memory/tensor_copy.h"
#include "ops/gemm.h"
#include "pipeline/runner/ensemble_buffers.h"
#include "pipeline/runner/prediction_heads.h"
#include "pipeline/runner/recycle_stop.h"
#include "pipeline/runner/run_checkpoint.h"
#include "pipeline/runner/run_memory.h"
#include "pipeline/runner/wall_clock.h"
#include "structure/atom_builder.h"
#include "structure/rigid.h"

namespace cpufold {
namespace {

using Clock = WallClock;

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

// One run of the recycling loop, phase by phase: the plan step, the outputs allocated, then per
// iteration the trunk (with its ensemble), the structure module and the stop checks; the heads
// last.
class RecyclingRun {
 public:
  RecyclingRun(const ModelParts& m, const FeatureSource& source, const RunOptions& o)
      : m_(m),
        source_(source),
        o_(o),
        c_(m.trunk.config()),
        features_("features", dram_tier(), source.bytes_per_iteration) {}

  Prediction execute() {
    stage("features");
    const PlannedRun planned = plan_run(m_.runner, source_, o_, features_, p_, o_.progress);
    in_ = planned.inputs;
    d_ = planned.dims;
    chunks_ = planned.chunks;
    allocate_outputs();
    for (std::int64_t k = resume(); k <= o_.recycles; ++k) {
      const RunContext ctx{p_.scratch.get(),     chunks_.structure,  o_.tracer, static_cast<int>(k),
                           p_.activations.get(), &o_.on_trunk_phase, &gemm_,    &o_.on_module};
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

  void allocate_outputs() {
    const std::int64_t n = d_.n_res;
    Arena& out = *p_.arena;
    state_ = m_.trunk.allocate_state(d_, out);
    p_.sm = StructureModuleOutputs::allocate(out, c_, n);
    const FinalStructureBuffers f = FinalStructureBuffers::buffers(n).allocate(out);
    p_.final_atom_positions = f.atom_positions;
    p_.final_atom_mask = f.atom_mask;
    p_.final_atom14_positions = f.atom14_positions;
    p_.final_affine_tensor = f.affine_tensor;
    p_.final_rot_mats = f.rot_mats;
    p_.final_trans = f.trans;
    ca_prev_ = f.previous_ca;
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
    if (o_.keep_iterations) {
      say("no checkpoints: every iteration's structure is kept");
      return 0;
    }
    const auto t = Clock::now();
    features_.release_to(0);
    // The compute precision changes every number: a bf16 run never resumes an fp32 one.
    const std::string context =
        o_.checkpoint_context + "; precision " + std::string(dtype_name(m_.runner.precision()));
    std::string key = run_checkpoint_key({m_.runner.params_file(), &c_, o_.recycles, o_.ensemble,
                                          o_.early_stop_tolerance, chunks_, context},
                                         source_, features_);
    in_ = source_.read(0, features_);
    checkpoint_.emplace(*o_.spill_dir, m_.runner.params_file().stem().string(), std::move(key),
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

  // Iteration k's feature sample for ensemble member e (the first is read by the plan step).
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

  // Every ensemble member's trunk pass (EnsembleBuffers: AF2 ensembling); the trunk's seconds.
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
      m_.trunk.forward(in_, state_, ctx, chunks_);
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
    m_.structure_module.forward(state_.single, state_.pair, in_.aatype, in_.seq_mask, p_.sm, ctx);
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
    m_.heads.allocate_outputs(p_, ctx.activation_arena(), d_.n_seq, d_.n_res);
    m_.heads.forward(p_, in_.seq_mask, ctx);
  }
  void timed_heads() {
    stage("heads");
    const auto t = Clock::now();
    run_heads();
    heads_current_ = true;
    t_heads_ += seconds_since(t);
  }

  // This iteration's structure and confidence, kept in the outputs arena (planned there).
  void keep_iteration() {
    const IterationStructure s = IterationStructure::buffers(d_.n_res).allocate(*p_.arena);
    copy_tensor(p_.final_atom_positions, s.atom_positions);
    copy_tensor(p_.final_atom_mask, s.atom_mask);
    copy_tensor(p_.plddt, s.plddt);
    p_.kept_iterations.push_back(s);
  }

  // The iteration's progress line, and whether recycling stops here: the caller's stop_when
  // (which sees the heads' outputs) or the CA distance change.
  bool stops_after(std::int64_t k, double trunk_s, double structure_s) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "iteration %lld of %lld: trunk %.2f s, structure %.2f s",
                  static_cast<long long>(k + 1), static_cast<long long>(o_.recycles + 1), trunk_s,
                  structure_s);
    std::string line = msg;
    heads_current_ = false;
    if (o_.stop_when || o_.keep_iterations) {
      timed_heads();
      if (o_.keep_iterations) keep_iteration();
      if (o_.stop_when && o_.stop_when(p_)) {
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

  const ModelParts& m_;
  const FeatureSource& source_;
  const RunOptions& o_;
  const ModelConfig& c_;
  const Clock::time_point start_ = Clock::now();
  Arena features_;
  TrunkInputs in_;
  TrunkDims d_;
  ChunkSizes chunks_;  // the plan's
  GemmCache gemm_;     // the trunk's product primitives, over every iteration
  Prediction p_;
  TrunkState state_;
  Tensor ca_prev_;
  std::optional<EnsembleBuffers> ens_;
  std::optional<RunCheckpoint> checkpoint_;
  bool heads_current_ = false;  // the heads have seen the latest iteration
  double t_features_ = 0, t_trunk_ = 0, t_structure_ = 0, t_heads_ = 0;
};

}  // namespace

Prediction run_recycling(const ModelParts& model, const FeatureSource& source,
                         const RunOptions& options) {
  return RecyclingRun(model, source, options).execute();
}

}  // namespace cpufold
