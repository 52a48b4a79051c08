// AF2's recycling embedder (supplement Alg. 32): the previous iteration's MSA first row, pair
// representation and pseudo-beta positions, embedded as updates to the new m[0] and z.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evoformer/embedder_support.h"
#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// Restype index of glycine in AF2's order (ARNDCQEGHILKMFPSTWYV), and atom slots.
inline constexpr std::int64_t kGlycine = 7;
inline constexpr std::int64_t kUnknownRestype = 20;
inline constexpr std::int64_t kAtom37Ca = 1, kAtom37Cb = 3;
inline constexpr std::int64_t kAtom14Ca = 1, kAtom14Cb = 4;

// Pseudo-beta positions: CB, or CA for glycine. aatype: [n_res] (i64 or i32),
// atom37: [n_res, 37, 3] (AF2's final_atom_positions) -> dst: [n_res, 3]. Takes the atoms as
// they are (AF2 and OpenFold feed positions already multiplied by the atom37 existence mask).
void pseudo_beta_from_atom37(const Tensor& aatype, const Tensor& atom37, const Tensor& dst);

// The same from atom14 positions ([n_res, 14, 3], the structure module's output): what AF2
// computes after atom14 -> atom37 and the existence mask, so an unknown residue (aatype 20,
// which has no atoms in atom37) gets the origin.
void pseudo_beta_from_atom14(const Tensor& aatype, const Tensor& atom14, const Tensor& dst);

// AF2 Alg. 32
// m1_update = LayerNorm(prev_msa_first_row)                      (prev_msa_first_row_norm)
// z_update  = LayerNorm(prev_pair) + Linear(one_hot(dgram(x)))   (prev_pair_norm, prev_pos_linear)
// The one-hot Linear is a row gather: W[bin(|x_i - x_j|²)] + b, or b for no bin.
class RecyclingEmbedder {
 public:
  // OpenFold's recycling distogram: 15 bins from 3.25 to 20.75 Å, last upper edge 1e8 Å².
  struct Bins {
    float min_bin = 3.25f;
    float max_bin = 20.75f;
    float inf = 1e8f;
  };

  // scope: `evoformer` (prev_msa_first_row_norm [c_m], prev_pair_norm [c_z], prev_pos_linear
  // [n_bins, c_z]; ModelConfig::recycle_pos_bins gives n_bins).
  RecyclingEmbedder(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                    std::int64_t n_bins, Bins bins);
  RecyclingEmbedder(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                    std::int64_t n_bins)
      : RecyclingEmbedder(scope, c_m, c_z, n_bins, Bins{}) {}

  // prev_msa_first_row: [n_res, c_m], prev_pair: [n_res, n_res, c_z], prev_pseudo_beta:
  // [n_res, 3] (all zeros at the first iteration, as in AF2).
  // accumulate: msa_first_row += m1_update, pair += z_update (no aliasing with the prev_*).
  // otherwise:  msa_first_row  = m1_update, pair  = z_update; then msa_first_row may BE
  //   prev_msa_first_row and pair may BE prev_pair, so the previous pair turns into the update
  //   in place and the input embedder can then accumulate into it: one pair-sized buffer.
  // Scratch: scratch_bytes(n_res, c_m, c_z, accumulate, ctx.chunk). Rows of the pair are
  // processed ctx.chunk at a time when accumulating (<= 0: all).
  // Traces `recycling_embedder/call_k/out_0` and `out_1` when not accumulating.
  void forward(const Tensor& prev_msa_first_row, const Tensor& prev_pair,
               const Tensor& prev_pseudo_beta, const Tensor& msa_first_row, const Tensor& pair,
               bool accumulate, const RunContext& ctx) const;

  static std::size_t scratch_bytes(std::int64_t n_res, std::int64_t c_m, std::int64_t c_z,
                                   bool accumulate, std::int64_t chunk);

  const DistanceBins& bins() const { return bins_; }

 private:
  // forward()'s buffers, stated once in the list that both allocates and sizes them.
  struct Buffers {
    Tensor x;          // the pseudo-beta positions, contiguous [n_res, 3]
    Tensor first_row;  // accumulating only: the normalised first row [n_res, c_m]
    Tensor pair_rows;  // accumulating only: a block of normalised pair rows [rows, n_res, c_z]
  };
  static BufferList<Buffers> buffers(std::int64_t n_res, std::int64_t c_m, std::int64_t c_z,
                                     bool accumulate, std::int64_t chunk);

  // The phases of forward(): the previous MSA first row normalised into the new one, or into
  // `update` and added (accumulating); the previous pair normalised plus the distogram row of
  // each pair from the pseudo-beta positions `x` [n_res, 3], into the new pair, or a block of
  // `rows` at a time and added.
  void embed_first_row(const Tensor& prev, const Tensor& first_row, const Tensor& update) const;
  void embed_pair(const Tensor& prev_pair, const float* x, const Tensor& pair,
                  const Tensor& rows) const;

  std::int64_t c_m_, c_z_;
  LayerNorm msa_norm_, pair_norm_;
  DistanceBins bins_;
  std::vector<float> table_;  // [n_bins + 1, c_z]: W[k] + b, and b alone for "no bin"
};

}  // namespace cpufold
