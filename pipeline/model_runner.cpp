#include "pipeline/model_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "memory/peak_tracker.h"
#include "memory/tensor_copy.h"
#include "pipeline/prediction_heads.h"
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

}  // namespace

ModelRunner::ModelRunner(const WeightStore& store, const ModelConfig& config)
    : trunk_(store, config),
      structure_module_(store, config),
      heads_(std::make_unique<PredictionHeads>(store, config)) {}

ModelRunner::~ModelRunner() = default;

Prediction ModelRunner::run(const FeatureSource& source, const RunOptions& o) const {
  const auto start = Clock::now();
  auto say = [&](const std::string& msg) {
    if (o.progress) o.progress(msg);
  };
  if (o.recycles < 0) throw InputError("the number of recycles must be >= 0");
  if (source.iterations < o.recycles + 1) {
    throw InputError("the features hold " + std::to_string(source.iterations) +
                     " recycling iteration(s); " + std::to_string(o.recycles) + " recycles need " +
                     std::to_string(o.recycles + 1));
  }
  const ModelConfig& c = config();
  Prediction p;

  // Plan every arena from the first iteration's sizes before running anything.
  Arena features("features", dram_tier(), source.bytes_per_iteration);
  TrunkInputs in = source.read(0, features);
  const TrunkDims d = Trunk::dims_of(in, c);
  const std::int64_t n = d.n_res, layers = c.n_structure_layers;
  const std::size_t output_bytes = trunk_.state_bytes(d) + StructureModuleOutputs::bytes(c, n) +
                                   heads_->output_bytes(d.n_seq, n) + f32_bytes({n, 37, 3}) +
                                   f32_bytes({n, 37}) + f32_bytes({n, 14, 3}) + f32_bytes({n, 7}) +
                                   f32_bytes({n, 3, 3}) + 2 * f32_bytes({n, 3});
  p.arena = std::make_unique<Arena>("prediction", dram_tier(), output_bytes);
  Arena scratch(
      "scratch", dram_tier(),
      std::max({trunk_.scratch_bytes(d, o.chunk), structure_module_.scratch_bytes(n, o.chunk),
                heads_->scratch_bytes(d.n_seq, n)}));
  p.planned_bytes = features.capacity() + p.arena->capacity() + scratch.capacity();

  Arena& out = *p.arena;
  TrunkState state = trunk_.allocate_state(d, out);
  p.sm = StructureModuleOutputs::allocate(out, c, n);
  p.final_atom_positions = out.allocate(DType::f32, {n, 37, 3});
  p.final_atom_mask = out.allocate(DType::f32, {n, 37});
  p.final_atom14_positions = out.allocate(DType::f32, {n, 14, 3});
  p.final_affine_tensor = out.allocate(DType::f32, {n, 7});
  p.final_rot_mats = out.allocate(DType::f32, {n, 3, 3});
  p.final_trans = out.allocate(DType::f32, {n, 3});
  const Tensor ca_prev = out.allocate(DType::f32, {n, 3});
  heads_->allocate_outputs(p, out, d.n_seq, n);
  say("N_res " + std::to_string(n) + ", " + std::to_string(d.n_seq) + " MSA rows, " +
      std::to_string(d.n_extra) + " extra rows, " + std::to_string(d.n_templ) +
      " templates; memory planned: " + std::to_string(p.planned_bytes >> 20) + " MiB");

  // Outputs are views of the trunk state: they hold the latest iteration's values.
  p.msa = state.msa.slice(0, 0, d.n_seq);
  p.msa_first_row = state.msa_first_row;
  p.pair = state.pair;
  p.single = state.single;
  const auto run_heads = [&] {
    copy_tensor(p.sm.positions.select(0, layers - 1), p.final_atom14_positions);
    copy_tensor(p.sm.frames.select(0, layers - 1), p.final_affine_tensor);
    split_frames(p.final_affine_tensor, p.final_rot_mats, p.final_trans);
    heads_->forward(p, in.seq_mask, RunContext{&scratch, o.chunk, o.tracer, 0});
  };
  bool heads_current = false;  // the heads have seen the latest iteration

  double t_features = 0, t_trunk = 0, t_structure = 0, t_heads = 0;
  for (std::int64_t k = 0; k <= o.recycles; ++k) {
    if (k > 0) {
      const auto t = Clock::now();
      features.release_to(0);
      in = source.read(k, features);
      if (!(Trunk::dims_of(in, c).n_res == n))
        throw InputError("features change size between iterations");
      t_features += seconds_since(t);
    }
    const RunContext ctx{&scratch, o.chunk, o.tracer, static_cast<int>(k)};
    auto t = Clock::now();
    trunk_.forward(in, state, ctx);
    const double trunk_s = seconds_since(t);
    t_trunk += trunk_s;
    t = Clock::now();
    structure_module_.forward(state.single, state.pair, in.aatype, in.seq_mask, p.sm, ctx);
    atom14_to_atom37(p.sm.positions.select(0, layers - 1), in.aatype, p.final_atom_positions,
                     p.final_atom_mask);
    // AF2 Alg. 2: the next iteration sees this one's pseudo-beta positions.
    pseudo_beta_from_atom37(in.aatype, p.final_atom_positions, state.prev_pseudo_beta);
    t_structure += seconds_since(t);
    p.iterations = k + 1;
    char msg[160];
    std::snprintf(msg, sizeof msg, "iteration %lld of %lld: trunk %.2f s, structure %.2f s",
                  static_cast<long long>(k + 1), static_cast<long long>(o.recycles + 1), trunk_s,
                  seconds_since(t));
    std::string line = msg;
    heads_current = false;
    if (o.after_iteration) {
      t = Clock::now();
      run_heads();
      heads_current = true;
      t_heads += seconds_since(t);
      if (o.after_iteration(p, k)) {
        say(line + ": score reached, recycling stops");
        break;
      }
    }
    if (k > 0 && o.early_stop_tolerance > 0) {
      const double change = ca_distance_change(ca_prev, p.final_atom_positions);
      std::snprintf(msg, sizeof msg, ", CA distance change %.3f A", change);
      line += msg;
      if (change < o.early_stop_tolerance) {
        say(line + " < tolerance: recycling stops");
        break;
      }
    }
    say(line);
    copy_ca(p.final_atom_positions, ca_prev);
  }

  // Outputs of the last iteration.
  if (!heads_current) {
    const auto t = Clock::now();
    run_heads();
    t_heads += seconds_since(t);
  }

  p.timings = {{"features", t_features},
               {"trunk", t_trunk},
               {"structure", t_structure},
               {"heads", t_heads},
               {"total", seconds_since(start)}};
  p.peak_rss_bytes = os_peak_rss_bytes();
  return p;
}

}  // namespace cpufold
