// Invariant point attention (AF2 supplement Alg. 22): attention over residues whose logits mix
// scalar query·key terms, a pair bias and distances between query and key points placed in
// the global frame by each residue's backbone frame; the outputs (scalar, points mapped back to
// the local frame, point norms, pair-weighted sums) are projected to a single update.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"
#include "structure/rigid.h"

namespace cpufold {

struct IpaDims {
  std::int64_t n_head = 0;
  std::int64_t c_hidden = 0;     // scalar query/key/value channels per head (c_ipa)
  std::int64_t n_qk_points = 0;  // query/key points per head
  std::int64_t n_v_points = 0;   // value points per head
};

// AF2 Alg. 22
class InvariantPointAttention {
 public:
  // AF2 and OpenFold: logits of masked pairs get -1e5; point norms are sqrt(|x|² + 1e-8).
  static constexpr float kInf = 1e5f;
  static constexpr float kEps = 1e-8f;

  // scope: `structure_module/fold_iteration/invariant_point_attention`, holding q_scalar
  // [c_s, H·c], kv_scalar [c_s, H·2c] (per head: c key then c value channels), q_point_local
  // [c_s, 3·H·P_qk] and kv_point_local [c_s, 3·H·(P_qk+P_v)] (x, y, z blocks along the last
  // axis, each [H, P] with a head's P_qk key points before its P_v value points),
  // attention_2d [c_z, H], trainable_point_weights [H] (softplus-ed), output_projection
  // [H·(c + 4·P_v + c_z), c_s]; every linear has a bias.
  InvariantPointAttention(const ParamScope& scope, std::int64_t c_s, std::int64_t c_z,
                          IpaDims dims);

  // s: [n_res, c_s] contiguous, the single representation.
  // z: [n_res, n_res, c_z] contiguous, the pair representation; when `pair_norm` is given it is
  //    applied to row slabs of z as they are used (so the normalised pair never exists whole),
  //    otherwise z is used as is.
  // frames: n_res backbone frames (local -> global), translations in the units the points use
  //    (nm in the structure module).
  // mask: [n_res] f32 (any stride); pairs with mask_i·mask_j = 0 get logit bias -1e5.
  // dst: [n_res, c_s]; dst = IPA(...) or, with `accumulate`, dst += IPA(...). dst may be s:
  //    s is read only before the first write.
  // ctx.chunk query rows are attended at a time (<= 0: all), bounding the [rows, n_res, ·]
  // transients (normalised pair slab, pair bias, logits).
  void forward(const Tensor& s, const Tensor& z, const LayerNorm* pair_norm,
               std::span<const Rigid> frames, const Tensor& mask, const Tensor& dst,
               bool accumulate, const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues with slices of `chunk` query rows.
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk, bool pair_norm,
                            bool accumulate) const;

  const IpaDims& dims() const { return dims_; }
  // Width of the concatenated output features: H·(c + 3·P_v + P_v + c_z).
  std::int64_t c_concat() const;

 private:
  // Alg. 22 lines 1-3 for every residue: scalar queries, keys and values, and query, key and
  // value points placed in the global frame, in the layouts the attention loops read.
  struct Projections;
  // The transients of one slice of query rows: pair rows, pair bias, logits, outputs.
  struct QuerySlice;
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  struct Held {  // for every slice: Projections' storage
    Tensor q, q_points, keys, vals, mask;
  };
  struct Local {       // the projections of s before they are scattered into Held
    Tensor kv;         // [n, 2·H·c]
    Tensor points;     // [n, 3·H·P_qk], the query points
    Tensor kv_points;  // [n, 3·H·(P_qk + P_v)]
  };
  struct SliceBuffers {  // one slice of ni query rows
    Tensor pair;         // with a pair norm: the normalised pair rows [ni, n, c_z]
    Tensor bias;         // [ni, n, H]
    Tensor logits;       // [ni, H, n]
    Tensor gathered;     // [ni, H, val_cols]
    Tensor feats;        // [ni, c_concat]
  };
  BufferList<Held> held_buffers(std::int64_t n) const;
  BufferList<Local> local_buffers(std::int64_t n) const;
  BufferList<SliceBuffers> slice_buffers(std::int64_t ni, std::int64_t n, bool pair_norm) const;

  Projections project(const Tensor& s, std::span<const Rigid> frames, const Tensor& mask,
                      Arena& arena) const;
  // The keys and values of the scalar projection kvs [n, H, 2c] and the local points qpl
  // [n, 3, H, P_qk] and kvpl [n, 3, H, P_qk + P_v] placed in `out`'s layouts, the points in
  // the global frame.
  void scatter_projections(const Projections& out, std::span<const Rigid> frames, const float* kvs,
                           const float* qpl, const float* kvpl) const;
  // Line 4 for query rows [i0, i0 + ni): b = LinearNoBias(z) on the (normalised) pair rows,
  // and the slice's other buffers.
  QuerySlice begin_slice(const Tensor& z, const LayerNorm* pair_norm, std::int64_t i0,
                         std::int64_t ni, Arena& arena) const;
  // Line 7: the attention weights (logits, then the softmax over keys).
  void attention_weights(const Projections& p, const QuerySlice& q) const;
  // Lines 8-10: attention-weighted pair rows, scalar values and global value points.
  void attend(const Projections& p, const QuerySlice& q) const;
  // Lines 10-11: the output features, value points back in each query's local frame and their
  // norms, in AF2's concatenation order.
  void output_features(std::span<const Rigid> frames, const QuerySlice& q) const;

  std::int64_t c_s_, c_z_;
  IpaDims dims_;
  Linear q_scalar_;                   // [c_s] -> [H·c]
  Linear kv_scalar_;                  // [c_s] -> [H·2c]
  Linear q_point_local_;              // [c_s] -> [3·H·P_qk]
  Linear kv_point_local_;             // [c_s] -> [3·H·(P_qk+P_v)]
  Linear attention_2d_;               // [c_z] -> [H]
  Linear output_projection_;          // [c_concat] -> [c_s]
  std::vector<float> point_weights_;  // [H]: softplus(trainable)·sqrt(1/(3·P_qk·9/2))
};

}  // namespace cpufold
