#include "structure/structure_module.h"

#include <algorithm>
#include <string>
#include <vector>

#include "memory/tensor_copy.h"
#include "ops/param_scope.h"
#include "structure/atom_builder.h"
#include "structure/residue_constants.h"
#include "structure/rigid.h"

namespace cpufold {
namespace {

constexpr std::int64_t kGroups = kNumRigidGroups;

void check_shape(const Tensor& t, const Shape& shape, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == shape) || !t.is_contiguous()) {
    throw InternalError(std::string("StructureModule ") + what + " must be contiguous f32" +
                        shape.str() + ", got " + t.describe());
  }
}

struct OutputShapes {
  Shape frames, sidechain_frames, angles, positions, states, single;
};

OutputShapes output_shapes(std::int64_t n_layers, std::int64_t n_res, std::int64_t n_torsions,
                           std::int64_t c_s) {
  return {Shape{n_layers, n_res, 7},
          Shape{n_layers, n_res, kGroups, 4, 4},
          Shape{n_layers, n_res, n_torsions, 2},
          Shape{n_layers, n_res, kNumAtom14, 3},
          Shape{n_layers, n_res, c_s},
          Shape{n_res, c_s}};
}

// Alg. 20 line 4: identity frames as quaternion + translation rows [n, 7].
void set_identity_frames(const Tensor& state) {
  float* const q = state.data_as<float>();
  for (std::int64_t i = 0; i < state.dim(0); ++i) {
    std::fill(q + 7 * i, q + 7 * i + 7, 0.f);
    q[7 * i] = 1.f;
  }
}

// The layer's frames from the tensor-7 rows `q` (translations in nm): as IPA sees them (nm),
// as the atoms need them (Å), and into the layer's output (Å).
void read_frames(const float* q, std::vector<Rigid>& frames, std::vector<Rigid>& backbone,
                 const Tensor& frames_out) {
  float* const out = frames_out.data_as<float>();
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const float* const row = q + 7 * k;
    frames[k] = Rigid::from_tensor_7(row);
    backbone[k] = {frames[k].rot, frames[k].trans * StructureModule::kTransScaleFactor};
    std::copy(row, row + 4, out + 7 * k);
    for (std::size_t d = 0; d < 3; ++d)
      out[7 * k + 4 + d] = row[4 + d] * StructureModule::kTransScaleFactor;
  }
}

void trace_outputs(const StructureModuleOutputs& out, const RunContext& ctx) {
  const std::string module = "structure_module";
  ctx.trace(module, "out/frames", out.frames);
  if (!out.positions.empty()) {
    ctx.trace(module, "out/sidechain_frames", out.sidechain_frames);
    ctx.trace(module, "out/positions", out.positions);
  }
  ctx.trace(module, "out/unnormalized_angles", out.unnormalized_angles);
  ctx.trace(module, "out/angles", out.angles);
  ctx.trace(module, "out/states", out.states);
  ctx.trace(module, "out/single", out.single);
}

}  // namespace

BufferList<StructureModuleOutputs> StructureModuleOutputs::buffers(const ModelConfig& config,
                                                                   std::int64_t n_res) {
  const OutputShapes s =
      output_shapes(config.n_structure_layers, n_res, config.n_torsions, config.c_s);
  using O = StructureModuleOutputs;
  return {{&O::frames, DType::f32, s.frames},
          {&O::sidechain_frames, DType::f32, s.sidechain_frames},
          {&O::unnormalized_angles, DType::f32, s.angles},
          {&O::angles, DType::f32, s.angles},
          {&O::positions, DType::f32, s.positions},
          {&O::states, DType::f32, s.states},
          {&O::single, DType::f32, s.single}};
}

StructureModule::StructureModule(const ParamScope& root, const ModelConfig& config)
    : c_s_(config.c_s),
      c_z_(config.c_z),
      c_resnet_(config.c_resnet),
      n_torsions_(config.n_torsions),
      n_layers_(config.n_structure_layers),
      single_layer_norm_(
          (root.at("structure_module") / "single_layer_norm").layer_norm(config.c_s)),
      pair_layer_norm_((root.at("structure_module") / "pair_layer_norm").layer_norm(config.c_z)),
      initial_projection_(
          (root.at("structure_module") / "initial_projection").linear({c_s_, c_s_})),
      ipa_(root.at("structure_module/fold_iteration/invariant_point_attention"), config.c_s,
           config.c_z,
           IpaDims{config.n_head_ipa, config.c_ipa, config.n_qk_points, config.n_v_points}),
      attention_layer_norm_(
          root.at("structure_module/fold_iteration/attention_layer_norm").layer_norm(config.c_s)),
      transition_(root.at("structure_module/fold_iteration/transition").linear({c_s_, c_s_})),
      transition_1_(root.at("structure_module/fold_iteration/transition_1").linear({c_s_, c_s_})),
      transition_2_(root.at("structure_module/fold_iteration/transition_2").linear({c_s_, c_s_})),
      transition_layer_norm_(
          root.at("structure_module/fold_iteration/transition_layer_norm").layer_norm(config.c_s)),
      backbone_update_(root.at("structure_module/fold_iteration/affine_update"), config.c_s),
      angle_resnet_(root.at("structure_module/fold_iteration/rigid_sidechain"), config.c_s,
                    config.c_resnet, config.n_torsions) {
  if (n_torsions_ != kNumTorsions) {
    throw WeightsError("structure module predicts " + std::to_string(n_torsions_) +
                       " torsion angles; the atom builder needs " + std::to_string(kNumTorsions));
  }
}

void StructureModule::check_outputs(const StructureModuleOutputs& out, std::int64_t n_res) const {
  const OutputShapes s = output_shapes(n_layers_, n_res, n_torsions_, c_s_);
  check_shape(out.frames, s.frames, "frames");
  check_shape(out.unnormalized_angles, s.angles, "unnormalized_angles");
  check_shape(out.angles, s.angles, "angles");
  check_shape(out.states, s.states, "states");
  check_shape(out.single, s.single, "single");
  if (out.positions.empty() != out.sidechain_frames.empty()) {
    throw InternalError("StructureModule: give both positions and sidechain_frames, or neither");
  }
  if (!out.positions.empty()) {
    check_shape(out.positions, s.positions, "positions");
    check_shape(out.sidechain_frames, s.sidechain_frames, "sidechain_frames");
  }
}

std::int64_t StructureModule::check_inputs(const Tensor& single, const Tensor& pair,
                                           const Tensor& aatype, const Tensor& seq_mask) const {
  const std::int64_t n = single.rank() == 2 ? single.dim(0) : -1;
  check_shape(single, Shape{n, c_s_}, "single");
  check_shape(pair, Shape{n, n, c_z_}, "pair");
  if (aatype.rank() != 1 || aatype.dim(0) != n || seq_mask.rank() != 1 || seq_mask.dim(0) != n) {
    throw InternalError("StructureModule: aatype " + aatype.describe() + " and seq_mask " +
                        seq_mask.describe() + " for " + std::to_string(n) + " residues");
  }
  return n;
}

void StructureModule::update_single(const Tensor& s, const Tensor& pair,
                                    std::span<const Rigid> frames, const Tensor& seq_mask,
                                    const Tensor& hidden_1, const Tensor& hidden_2,
                                    const RunContext& ctx) const {
  Arena& arena = ctx.arena();
  LinearEpilogue relu;
  relu.activation = Activation::relu;
  LinearEpilogue accumulate;
  accumulate.accumulate = true;
  // Lines 6-7: s += IPA(s, z, T); LayerNorm (dropout is off at inference).
  ipa_.forward(s, pair, &pair_layer_norm_, frames, seq_mask, s, /*accumulate=*/true, ctx);
  attention_layer_norm_.forward(s, s);
  // Lines 8-9: s += transition_2(relu(transition_1(relu(transition(s))))); LayerNorm.
  transition_.forward(s, hidden_1, arena, relu);
  transition_1_.forward(hidden_1, hidden_2, arena, relu);
  transition_2_.forward(hidden_2, s, arena, accumulate);
  transition_layer_norm_.forward(s, s);
}

void StructureModule::forward(const Tensor& single, const Tensor& pair, const Tensor& aatype,
                              const Tensor& seq_mask, const StructureModuleOutputs& out,
                              const RunContext& ctx) const {
  const std::int64_t n = check_inputs(single, pair, aatype, seq_mask);
  check_outputs(out, n);
  const bool atoms = !out.positions.empty();
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);

  const Held held = held_buffers(n).allocate(arena);
  const Tensor &s = held.s, &initial = held.initial, &state = held.state;
  // Alg. 20 lines 1-3: normalise the single (the pair is normalised slab by slab inside IPA).
  single_layer_norm_.forward(single, held.s_initial);
  initial_projection_.forward(held.s_initial, s, arena);
  angle_resnet_.project_initial(held.s_initial, initial, arena);

  // Alg. 20 line 4: identity frames, kept as quaternion + translation (nm) rows.
  set_identity_frames(state);
  const float* const q = state.data_as<float>();
  std::vector<Rigid> frames(static_cast<std::size_t>(n));    // nm, what IPA sees
  std::vector<Rigid> backbone(static_cast<std::size_t>(n));  // Å, for the atoms
  std::vector<Rigid> groups(atoms ? static_cast<std::size_t>(n * kGroups) : 0);

  for (std::int64_t l = 0; l < n_layers_; ++l) {
    update_single(s, pair, frames, seq_mask, held.hidden_1, held.hidden_2, ctx);
    // Line 10: T ← T ∘ BackboneUpdate(s).
    backbone_update_.forward(s, state, arena);
    read_frames(q, frames, backbone, out.frames.select(0, l));
    copy_tensor(s, out.states.select(0, l));
    // Lines 11-14: torsion angles from the current and the initial single.
    const Tensor angles = out.angles.select(0, l);
    angle_resnet_.forward(s, initial, out.unnormalized_angles.select(0, l), angles, arena);
    // Alg. 24: rigid-group frames and atom14 positions in Å.
    if (atoms) {
      torsion_angles_to_frames(backbone, angles, aatype, groups);
      write_frames_4x4(groups, out.sidechain_frames.select(0, l));
      frames_to_atom14_positions(groups, aatype, out.positions.select(0, l));
    }
  }
  copy_tensor(s, out.single);

  trace_outputs(out, ctx);
}

BufferList<StructureModule::Held> StructureModule::held_buffers(std::int64_t n) const {
  return {{&Held::s_initial, DType::f32, Shape{n, c_s_}},
          {&Held::s, DType::f32, Shape{n, c_s_}},
          {&Held::initial, DType::f32, Shape{n, c_resnet_}},
          {&Held::state, DType::f32, Shape{n, 7}},
          {&Held::hidden_1, DType::f32, Shape{n, c_s_}},
          {&Held::hidden_2, DType::f32, Shape{n, c_s_}}};
}

std::size_t StructureModule::scratch_bytes(std::int64_t n_res, std::int64_t chunk) const {
  const EpilogueKind relu{.activation = Activation::relu};
  const EpilogueKind accumulate{.accumulate = true};
  const std::size_t step = std::max(
      {initial_projection_.scratch_bytes(n_res), angle_resnet_.scratch_bytes(n_res),
       ipa_.scratch_bytes(n_res, chunk, /*pair_norm=*/true, /*accumulate=*/true),
       transition_.scratch_bytes(n_res, relu), transition_1_.scratch_bytes(n_res, relu),
       transition_2_.scratch_bytes(n_res, accumulate), backbone_update_.scratch_bytes(n_res)});
  return held_buffers(n_res).bytes() + step;
}

}  // namespace cpufold
