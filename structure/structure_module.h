// The structure module (AF2 supplement Alg. 20): from the Evoformer's single and pair
// representations to backbone frames, torsion angles and atom14 positions, refined over
// n_structure_layers iterations that share one set of weights.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/arena.h"
#include "memory/buffer_list.h"
#include "memory/tensor.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/run_context.h"
#include "structure/angle_resnet.h"
#include "structure/backbone_update.h"
#include "structure/invariant_point_attention.h"

namespace cpufold {

// Per-layer outputs (AF2's / OpenFold's `sm` dict, layers stacked on axis 0) and the final
// single. Views the caller owns, all f32 contiguous. L = n_structure_layers.
struct StructureModuleOutputs {
  Tensor frames;               // [L, n_res, 7]: unit quaternion (w, x, y, z), translation in Å
  Tensor sidechain_frames;     // [L, n_res, 8, 4, 4]: rigid-group frames to global (Å)
  Tensor unnormalized_angles;  // [L, n_res, 7, 2]: (sin, cos) before normalisation
  Tensor angles;               // [L, n_res, 7, 2]: unit (sin, cos)
  Tensor positions;            // [L, n_res, 14, 3]: atom14 positions in Å
  Tensor states;               // [L, n_res, c_s]: the single after each layer's transition
  Tensor single;               // [n_res, c_s]: the single after the last layer

  // Every output for n_res residues, the list allocate() and bytes() both read.
  static BufferList<StructureModuleOutputs> buffers(const ModelConfig& config, std::int64_t n_res);
  // Views of every output in `arena` for n_res residues.
  static StructureModuleOutputs allocate(Arena& arena, const ModelConfig& config,
                                         std::int64_t n_res) {
    return buffers(config, n_res).allocate(arena);
  }
  // Bytes allocate() takes.
  static std::size_t bytes(const ModelConfig& config, std::int64_t n_res) {
    return buffers(config, n_res).bytes();
  }
};

// AF2 Alg. 20
class StructureModule {
 public:
  // OpenFold's (and AF2's position_scale) trans_scale_factor: frames move in nm inside the
  // module, while its outputs are in Å.
  static constexpr float kTransScaleFactor = 10.f;

  // Weights under `structure_module/`: single_layer_norm [c_s], pair_layer_norm [c_z],
  // initial_projection [c_s, c_s], and fold_iteration/ (invariant_point_attention,
  // attention_layer_norm, transition, transition_1, transition_2, transition_layer_norm,
  // affine_update, rigid_sidechain), shared by all config.n_structure_layers layers.
  StructureModule(const ParamScope& root, const ModelConfig& config);

  // single:   [n_res, c_s] the Evoformer's single output (contiguous).
  // pair:     [n_res, n_res, c_z] the Evoformer's pair output (contiguous); read only, it is
  //           normalised in row slabs of ctx.chunk rows as IPA uses it.
  // aatype:   [n_res] i32 or i64 restype indices (any stride), for the atoms.
  // seq_mask: [n_res] f32 (any stride), IPA's attention mask.
  // out:      every field filled (see StructureModuleOutputs); sidechain_frames and positions
  //           may be left empty to skip the atoms.
  // Traces `structure_module/call_k/out/<field>` for each output.
  void forward(const Tensor& single, const Tensor& pair, const Tensor& aatype,
               const Tensor& seq_mask, const StructureModuleOutputs& out,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena() for n_res residues and slices of `chunk`.
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk) const;

  const InvariantPointAttention& ipa() const { return ipa_; }

 private:
  // n_res; InternalError for inputs forward() does not take.
  std::int64_t check_inputs(const Tensor& single, const Tensor& pair, const Tensor& aatype,
                            const Tensor& seq_mask) const;
  void check_outputs(const StructureModuleOutputs& out, std::int64_t n_res) const;
  // forward()'s buffers, held for every layer; the one list that allocates and sizes them.
  struct Held {
    Tensor s_initial;  // the normalised input single [n, c_s]
    Tensor s;          // the single being updated [n, c_s]
    Tensor initial;    // the angle resnet's projection of s_initial [n, c_resnet]
    Tensor state;      // the frames as quaternion + translation (nm) rows [n, 7]
    Tensor hidden_1;   // the transition's hidden activations [n, c_s], twice
    Tensor hidden_2;
  };
  BufferList<Held> held_buffers(std::int64_t n) const;
  // AF2 Alg. 20 lines 6-9, one layer's update of s [n_res, c_s] in place (hidden_1, hidden_2:
  // [n_res, c_s] scratch of the transition).
  void update_single(const Tensor& s, const Tensor& pair, std::span<const Rigid> frames,
                     const Tensor& seq_mask, const Tensor& hidden_1, const Tensor& hidden_2,
                     const RunContext& ctx) const;

  std::int64_t c_s_, c_z_, c_resnet_, n_torsions_, n_layers_;
  LayerNorm single_layer_norm_;
  LayerNorm pair_layer_norm_;
  Linear initial_projection_;  // [c_s] -> [c_s]
  InvariantPointAttention ipa_;
  LayerNorm attention_layer_norm_;
  // AF2 Alg. 20 lines 8-9: one 3-layer transition (relu between), residual, then LayerNorm.
  Linear transition_, transition_1_, transition_2_;
  LayerNorm transition_layer_norm_;
  BackboneUpdate backbone_update_;
  AngleResnet angle_resnet_;
};

}  // namespace cpufold
