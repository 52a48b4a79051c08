// AF2's per-template pair features (88 channels) and the `embedding2d` Linear that embeds
// them into the template pair representation (supplement Alg. 2, template pair embedding).
//
// Channels, OpenFold's build_template_pair_feat order, every one multiplied by the backbone
// 2-D mask bb(i)·bb(j), bb = mask(N)·mask(CA)·mask(C):
//   [0, 39)   distogram one-hot of the template pseudo-beta distance (DistanceBins over
//             squared distances: 3.25..50.75 Å, last upper edge 1e5 Å², see TemplateDistogram)
//   39        pseudo-beta 2-D mask pb(i)·pb(j)
//   [40, 62)  one_hot(template_aatype[j], 22)   (tiled along i)
//   [62, 84)  one_hot(template_aatype[i], 22)   (tiled along j)
//   [84, 87)  unit vector in the backbone frame of i: always zeros here, as in the monomer
//             models (the reference config's template.use_unit_vector = false), so
//             template_all_atom_positions is not read
//   87        backbone 2-D mask
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evoformer/embedder_support.h"
#include "evoformer/trunk_inputs.h"
#include "memory/buffer_list.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

inline constexpr std::int64_t kTemplateAatypeClasses = 22;  // 20 amino acids, X, gap
// Channels besides the distogram: pb mask, two aatype one-hots, unit vector, backbone mask.
inline constexpr std::int64_t kTemplatePairNonDistogramChannels = 1 + 2 * 22 + 3 + 1;

// The template distogram's range; the bin count is the embedding2d width minus the other
// 49 channels (39 in AF2).
struct TemplateDistogram {
  float min_bin = 3.25f;
  float max_bin = 50.75f;
  // AF2-DEVIATION: OpenFold passes its template config's inf (1e5) as the last bin's upper
  // edge where DeepMind's dgram_from_positions uses 1e8, so a pseudo-beta pair more than
  // 316 Å apart falls in no bin instead of the last one. The reference follows OpenFold.
  float inf = 1e5f;
};

// Per-residue quantities of one template the pair features are built from, contiguous.
struct TemplateResidues {
  Tensor aatype;         // i64 [n_res], checked to lie in [0, 22)
  Tensor pseudo_beta;    // f32 [n_res, 3]
  Tensor pb_mask;        // f32 [n_res]
  Tensor backbone_mask;  // f32 [n_res]: mask(N)·mask(CA)·mask(C)
  Tensor aatype_copy;    // i64 [n_res]: template_aatype[t] made contiguous, when it is not
};

// template_residues()' buffers, stated once for it to allocate and for
// TemplatePairEmbedder::scratch_bytes to size; aatype_copy only with `copy_aatype`
// (needs_index_copy, always when sizing).
BufferList<TemplateResidues> template_residue_buffers(std::int64_t n_res, bool copy_aatype);

// Gathers template `t` of `in` (template_aatype, template_pseudo_beta(_mask),
// template_all_atom_mask) into contiguous arrays from `arena`.
TemplateResidues template_residues(const TrunkInputs& in, std::int64_t t, Arena& arena);

// Writes the 88 channels of pairs (row_begin + r, j) into dst: [rows, n_res, 88] (r < rows).
// The explicit form, for tests and traces; TemplatePairEmbedder never materialises it.
void build_template_pair_features(const TemplateResidues& res, const DistanceBins& bins,
                                  std::int64_t row_begin, const Tensor& dst);

// AF2 Alg. 2 (template pair embedding: `embedding2d`)
// t[i, j] = embedding2d(features(i, j)) as a gather over the one-hot structure:
//   b + bb2·(W[bin] + pb2·W[39] + W[40 + aatype_j] + W[62 + aatype_i] + bb2·W[87])
// (bb2, pb2: the backbone and pseudo-beta 2-D masks; no W[bin] term without a bin, b alone
// when bb2 = 0), which is the Linear of the 88 channels above without the 88-wide matmul.
class TemplatePairEmbedder {
 public:
  // scope: `evoformer/template_embedding/single_template_embedding` (embedding2d [c_in, c_t]).
  TemplatePairEmbedder(const ParamScope& scope, std::int64_t c_in, std::int64_t c_t,
                       TemplateDistogram distogram = {});

  // Template `t` of `in` -> dst: [n_res, n_res, c_t] (leading axes collapse to rows, e.g. one
  // template of a [n_templ, n_res, n_res, c_t] buffer), overwritten.
  // Scratch: scratch_bytes(n_res).
  void forward(const TrunkInputs& in, std::int64_t t, const Tensor& dst,
               const RunContext& ctx) const;

  static std::size_t scratch_bytes(std::int64_t n_res);

  const DistanceBins& bins() const { return bins_; }
  std::int64_t c_in() const { return c_in_; }
  std::int64_t c_t() const { return c_t_; }

 private:
  std::int64_t c_in_, c_t_;
  DistanceBins bins_;
  std::vector<float> w_;     // [c_in, c_t]
  std::vector<float> bias_;  // [c_t]
};

}  // namespace cpufold
