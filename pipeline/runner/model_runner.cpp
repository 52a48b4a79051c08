#include "pipeline/runner/model_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "memory/peak_tracker.h"
#include "memory/tensor_copy.h"
#include "pipeline/runner/prediction_heads.h"
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
  const std::int64_t ensemble = o.ensemble;
  if (ensemble < 1) throw InputError("the ensemble size must be >= 1");
  if (source.iterations < (o.recycles + 1) * ensemble) {
    throw InputError("the features hold " + std::to_string(source.iterations) +
                     " feature sample(s); " + std::to_string(o.recycles) + " recycles with " +
                     std::to_string(ensemble) + " ensemble member(s) need " +
                     std::to_string((o.recycles + 1) * ensemble));
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
                                   f32_bytes({n, 3, 3}) + 2 * f32_bytes({n, 3}) +
                                   (ensemble > 1 ? EnsembleBuffers::bytes(d, c) : 0);
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
  std::optional<EnsembleBuffers> ens;
  if (ensemble > 1) ens.emplace(EnsembleBuffers::allocate(d, c, out));

  double t_features = 0, t_trunk = 0, t_structure = 0, t_heads = 0;
  for (std::int64_t k = 0; k <= o.recycles; ++k) {
    const RunContext ctx{&scratch, o.chunk, o.tracer, static_cast<int>(k)};
    double trunk_s = 0;
    // AF2 ensembling: every member starts from the same recycled inputs and sees its own
    // feature sample (k * ensemble + e); pair, single and the first MSA row are averaged,
    // the MSA representation is the first member's.
    for (std::int64_t e = 0; e < ensemble; ++e) {
      if (k > 0 || e > 0) {
        const auto t = Clock::now();
        features.release_to(0);
        in = source.read(k * ensemble + e, features);
        const TrunkDims now = Trunk::dims_of(in, c);
        if (now.n_res != n || (ensemble > 1 && (now.n_seq != d.n_seq || now.n_templ != d.n_templ)))
          throw InputError("features change size between iterations");
        t_features += seconds_since(t);
      }
      if (ens) {
        if (e == 0) {
          ens->save_recycled(state);
        } else {
          ens->restore_recycled(state);
        }
      }
      const auto t = Clock::now();
      trunk_.forward(in, state, ctx);
      trunk_s += seconds_since(t);
      if (ens) ens->accumulate(state, e);
    }
    if (ens) ens->average_into(state, ensemble);
    t_trunk += trunk_s;
    auto t = Clock::now();
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
