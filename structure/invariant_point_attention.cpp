#include "structure/invariant_point_attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "memory/tensor_copy.h"
#include "ops/row_chunks.h"
#include "ops/softmax.h"
#include "ops/tensor_checks.h"

namespace cpufold {
namespace {

// Key positions per block of the point-distance loop: short enough for stack accumulators,
// long enough to vectorise over keys.
constexpr std::int64_t kKeyBlock = 64;

// PyTorch's softplus (beta 1, threshold 20), which OpenFold applies to the point weights;
// AF2's jax.nn.softplus agrees to fp32 rounding.
float softplus(float x) {
  return x > 20.f ? x : std::log1p(std::exp(x));
}

}  // namespace

InvariantPointAttention::InvariantPointAttention(const ParamScope& scope, std::int64_t c_s,
                                                 std::int64_t c_z, IpaDims dims)
    : c_s_(c_s),
      c_z_(c_z),
      dims_(dims),
      q_scalar_((scope / "q_scalar").linear({c_s, dims.n_head * dims.c_hidden})),
      kv_scalar_((scope / "kv_scalar").linear({c_s, 2 * dims.n_head * dims.c_hidden})),
      q_point_local_((scope / "q_point_local").linear({c_s, 3 * dims.n_head * dims.n_qk_points})),
      kv_point_local_((scope / "kv_point_local")
                          .linear({c_s, 3 * dims.n_head * (dims.n_qk_points + dims.n_v_points)})),
      attention_2d_((scope / "attention_2d").linear({c_z, dims.n_head})),
      output_projection_((scope / "output_projection").linear({c_concat(), c_s})),
      point_weights_(static_cast<std::size_t>(dims.n_head)) {
  const Tensor trainable = scope.get("trainable_point_weights", {dims.n_head});
  convert_tensor(trainable, Tensor(point_weights_.data(), DType::f32, Shape{dims.n_head}));
  // AF2 Alg. 22 line 7: w_C = sqrt(2 / (9·N_query_points)), written as sqrt(1/(3·(P·9/2))) with
  // the 1/3 of the three logit terms folded in.
  const float w_c = static_cast<float>(std::sqrt(1.0 / (3.0 * (dims.n_qk_points * 9.0 / 2.0))));
  for (float& w : point_weights_) w = softplus(w) * w_c;
}

std::int64_t InvariantPointAttention::c_concat() const {
  return dims_.n_head * (dims_.c_hidden + 4 * dims_.n_v_points + c_z_);
}

struct InvariantPointAttention::Projections {
  std::int64_t n = 0;         // residues
  std::int64_t key_rows = 0;  // per head: c scalar channels then the key points' x, y, z
  std::int64_t val_cols = 0;  // per head and residue: c scalar channels then value points
  float* q = nullptr;         // [n, n_head, c]
  float* q_points = nullptr;  // [n, n_head, 3·P_qk], global, point-major
  float* keys = nullptr;      // [n_head, key_rows, n]
  float* vals = nullptr;      // [n_head, n, val_cols]
  float* mask = nullptr;      // [n]
};

struct InvariantPointAttention::QuerySlice {
  std::int64_t i0 = 0, ni = 0;  // query rows [i0, i0 + ni)
  const float* pair = nullptr;  // [ni, n, c_z], normalised when a pair norm is given
  const float* bias = nullptr;  // [ni, n, n_head]
  Tensor logits;                // [ni, n_head, n], the attention weights after the softmax
  float* gathered = nullptr;    // [ni, n_head, val_cols]
  Tensor feats;                 // [ni, c_concat]
};

void InvariantPointAttention::forward(const Tensor& s, const Tensor& z, const LayerNorm* pair_norm,
                                      std::span<const Rigid> frames, const Tensor& mask,
                                      const Tensor& dst, bool accumulate,
                                      const RunContext& ctx) const {
  const std::int64_t n = s.rank() == 2 ? s.dim(0) : -1;
  detail::check_f32(s, Shape{n, c_s_}, "InvariantPointAttention s");
  detail::check_f32(z, Shape{n, n, c_z_}, "InvariantPointAttention z");
  detail::check_f32(dst, Shape{n, c_s_}, "InvariantPointAttention dst");
  if (!s.is_contiguous() || !z.is_contiguous()) {
    throw InternalError("InvariantPointAttention needs contiguous s and z, got " + s.describe() +
                        " and " + z.describe());
  }
  if (static_cast<std::int64_t>(frames.size()) != n || mask.rank() != 1 || mask.dim(0) != n ||
      mask.dtype() != DType::f32) {
    throw InternalError("InvariantPointAttention: " + std::to_string(frames.size()) +
                        " frames and mask " + mask.describe() + " for " + std::to_string(n) +
                        " residues");
  }
  if (n == 0) return;

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  const Projections p = project(s, frames, mask, arena);
  const std::int64_t rows = detail::chunk_rows(n, ctx.chunk);
  for (std::int64_t i0 = 0; i0 < n; i0 += rows) {
    ArenaScope chunk_scope(arena);
    const QuerySlice q = begin_slice(z, pair_norm, i0, std::min(rows, n - i0), arena);
    attention_weights(p, q);
    attend(p, q);
    output_features(frames, q);
    // Line 11: the output projection.
    LinearEpilogue epilogue;
    epilogue.accumulate = accumulate;
    output_projection_.forward(q.feats, dst.slice(0, i0, i0 + q.ni), arena, epilogue);
  }
}

InvariantPointAttention::Projections InvariantPointAttention::project(const Tensor& s,
                                                                      std::span<const Rigid> frames,
                                                                      const Tensor& mask,
                                                                      Arena& arena) const {
  const std::int64_t n = s.dim(0);
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  const std::int64_t p_qk = dims_.n_qk_points, p_v = dims_.n_v_points;
  const std::int64_t key_rows = c + 3 * p_qk;
  const std::int64_t val_cols = c + 3 * p_v;

  // Allocated in the caller's scope: they live for every slice of query rows.
  const Held held = held_buffers(n).allocate(arena);
  const Projections out{n,
                        key_rows,
                        val_cols,
                        held.q.data_as<float>(),
                        held.q_points.data_as<float>(),
                        held.keys.data_as<float>(),
                        held.vals.data_as<float>(),
                        held.mask.data_as<float>()};
  copy_tensor(mask, held.mask);

  ArenaScope proj_scope(arena);
  const Local local = local_buffers(n).allocate(arena);
  q_scalar_.forward(s, held.q.reshape(Shape{n, n_head * c}), arena);
  kv_scalar_.forward(s, local.kv, arena);
  q_point_local_.forward(s, local.points, arena);
  kv_point_local_.forward(s, local.kv_points, arena);
  scatter_projections(out, frames, local.kv.data_as<float>(), local.points.data_as<float>(),
                      local.kv_points.data_as<float>());
  return out;
}

void InvariantPointAttention::scatter_projections(const Projections& out,
                                                  std::span<const Rigid> frames, const float* kvs,
                                                  const float* qpl, const float* kvpl) const {
  const std::int64_t n = out.n, key_rows = out.key_rows, val_cols = out.val_cols;
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden;
  const std::int64_t p_qk = dims_.n_qk_points, p_kv = p_qk + dims_.n_v_points;
  float* const q_points = out.q_points;
  float* const keys = out.keys;
  float* const vals = out.vals;
#pragma omp parallel for schedule(static) if (n * n_head * key_rows >= (1 << 14))
  for (std::int64_t j = 0; j < n; ++j) {
    const Rigid& frame = frames[static_cast<std::size_t>(j)];
    for (std::int64_t h = 0; h < n_head; ++h) {
      const float* kv_row = kvs + (j * n_head + h) * 2 * c;  // per head: c keys, c values
      for (std::int64_t cc = 0; cc < c; ++cc) {
        keys[(h * key_rows + cc) * n + j] = kv_row[cc];
        vals[(h * n + j) * val_cols + cc] = kv_row[c + cc];
      }
      // Local points: the x, y, z blocks of the last axis, each [n_head, points].
      for (std::int64_t p = 0; p < p_qk; ++p) {
        const float* src = qpl + j * 3 * n_head * p_qk + h * p_qk + p;
        const Rigid::Vec3 g =
            frame.apply(Rigid::Vec3(src[0], src[n_head * p_qk], src[2 * n_head * p_qk]));
        float* dstp = q_points + (j * n_head + h) * 3 * p_qk + 3 * p;
        for (int d = 0; d < 3; ++d) dstp[d] = g[d];
      }
      for (std::int64_t p = 0; p < p_kv; ++p) {
        const float* src = kvpl + j * 3 * n_head * p_kv + h * p_kv + p;
        const Rigid::Vec3 g =
            frame.apply(Rigid::Vec3(src[0], src[n_head * p_kv], src[2 * n_head * p_kv]));
        for (int d = 0; d < 3; ++d) {
          if (p < p_qk) {
            keys[(h * key_rows + c + 3 * p + d) * n + j] = g[d];
          } else {
            vals[(h * n + j) * val_cols + c + 3 * (p - p_qk) + d] = g[d];
          }
        }
      }
    }
  }
}

InvariantPointAttention::QuerySlice InvariantPointAttention::begin_slice(const Tensor& z,
                                                                         const LayerNorm* pair_norm,
                                                                         std::int64_t i0,
                                                                         std::int64_t ni,
                                                                         Arena& arena) const {
  const std::int64_t n = z.dim(0);
  QuerySlice q;
  q.i0 = i0;
  q.ni = ni;
  const SliceBuffers b = slice_buffers(ni, n, pair_norm != nullptr).allocate(arena);
  Tensor z_rows = z.slice(0, i0, i0 + ni);
  if (pair_norm != nullptr) {
    pair_norm->forward(z_rows, b.pair);
    z_rows = b.pair;
  }
  q.pair = pair_norm != nullptr ? z_rows.data_as<float>() : z.data_as<float>() + i0 * n * c_z_;
  attention_2d_.forward(z_rows, b.bias, arena);
  q.bias = b.bias.data_as<float>();
  q.logits = b.logits;
  q.gathered = b.gathered.data_as<float>();
  q.feats = b.feats;
  return q;
}

void InvariantPointAttention::attention_weights(const Projections& pr, const QuerySlice& q) const {
  const std::int64_t n = pr.n, n_head = dims_.n_head, c = dims_.c_hidden;
  const std::int64_t p_qk = dims_.n_qk_points, key_rows = pr.key_rows;
  const std::int64_t i0 = q.i0, ni = q.ni;
  const float scalar_weight = static_cast<float>(std::sqrt(1.0 / (3.0 * c)));
  const float bias_weight = static_cast<float>(std::sqrt(1.0 / 3.0));
  const float* const bias = q.bias;
  const float* const m = pr.mask;
  float* const logits = q.logits.data_as<float>();

  // Logits (Alg. 22 line 7): w_L·(q·k/sqrt(c) + b - γ·w_C/2·Σ|T_i q - T_j k|²), w_L = 1/sqrt(3),
  // plus the mask bias; computed in OpenFold's order of operations.
#pragma omp parallel for schedule(static) if (ni * n_head * n * key_rows >= (1 << 16))
  for (std::int64_t ih = 0; ih < ni * n_head; ++ih) {
    const std::int64_t ii = ih / n_head, h = ih % n_head, i = i0 + ii;
    const float* qi = pr.q + (i * n_head + h) * c;
    const float* qpi = pr.q_points + (i * n_head + h) * 3 * p_qk;
    const float* kh = pr.keys + h * key_rows * n;
    const float w_point = point_weights_[static_cast<std::size_t>(h)];
    const float mi = m[i];
    float* l = logits + ih * n;
    for (std::int64_t j0 = 0; j0 < n; j0 += kKeyBlock) {
      const std::int64_t nj = std::min(kKeyBlock, n - j0);
      float qk[kKeyBlock] = {}, pt[kKeyBlock] = {};
      for (std::int64_t cc = 0; cc < c; ++cc) {
        const float qv = qi[cc];
        const float* kr = kh + cc * n + j0;
        for (std::int64_t jj = 0; jj < nj; ++jj) qk[jj] += qv * kr[jj];
      }
      for (std::int64_t p = 0; p < p_qk; ++p) {
        const float qx = qpi[3 * p], qy = qpi[3 * p + 1], qz = qpi[3 * p + 2];
        const float* kx = kh + (c + 3 * p) * n + j0;
        const float* ky = kx + n;
        const float* kz = ky + n;
        for (std::int64_t jj = 0; jj < nj; ++jj) {
          const float dx = qx - kx[jj], dy = qy - ky[jj], dz = qz - kz[jj];
          pt[jj] += (dx * dx + dy * dy + dz * dz) * w_point;
        }
      }
      for (std::int64_t jj = 0; jj < nj; ++jj) {
        const std::int64_t j = j0 + jj;
        float a = qk[jj] * scalar_weight + bias_weight * bias[(ii * n + j) * n_head + h];
        a += pt[jj] * -0.5f;
        l[j] = a + kInf * (mi * m[j] - 1.f);
      }
    }
  }
  softmax_inplace(q.logits);
}

void InvariantPointAttention::attend(const Projections& pr, const QuerySlice& q) const {
  const std::int64_t n = pr.n, n_head = dims_.n_head, val_cols = pr.val_cols, ni = q.ni;
  const std::int64_t c_cat = c_concat();
  const std::int64_t off_pair = n_head * (dims_.c_hidden + 4 * dims_.n_v_points);
  const float* const logits = q.logits.data_as<float>();
  float* const feats = q.feats.data_as<float>();

  // Attention-weighted values, global value points and pair rows (Alg. 22 lines 8-10). The
  // pair rows land in their place in the output features; the rest still needs frame changes.
#pragma omp parallel for schedule(static) if (ni * n_head * n * (val_cols + c_z_) >= (1 << 16))
  for (std::int64_t ih = 0; ih < ni * n_head; ++ih) {
    const std::int64_t ii = ih / n_head, h = ih % n_head;
    const float* a = logits + ih * n;
    float* acc = q.gathered + ih * val_cols;
    float* pair_acc = feats + ii * c_cat + off_pair + h * c_z_;
    std::fill(acc, acc + val_cols, 0.f);
    std::fill(pair_acc, pair_acc + c_z_, 0.f);
    for (std::int64_t j = 0; j < n; ++j) {
      const float w = a[j];
      const float* v = pr.vals + (h * n + j) * val_cols;
      for (std::int64_t k = 0; k < val_cols; ++k) acc[k] += w * v[k];
      const float* zj = q.pair + (ii * n + j) * c_z_;
      for (std::int64_t k = 0; k < c_z_; ++k) pair_acc[k] += w * zj[k];
    }
  }
}

void InvariantPointAttention::output_features(std::span<const Rigid> frames,
                                              const QuerySlice& q) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden, p_v = dims_.n_v_points;
  const std::int64_t val_cols = c + 3 * p_v, c_cat = c_concat();
  // Offsets of the output groups in the concatenation (AF2's order).
  const std::int64_t off_points = n_head * c;  // x block, then y, then z
  const std::int64_t off_norms = off_points + 3 * n_head * p_v;
  float* const feats = q.feats.data_as<float>();

  // Scalar outputs, points back in the local frame and their norms (Alg. 22 line 10-11).
  for (std::int64_t ii = 0; ii < q.ni; ++ii) {
    const Rigid& frame = frames[static_cast<std::size_t>(q.i0 + ii)];
    float* f = feats + ii * c_cat;
    for (std::int64_t h = 0; h < n_head; ++h) {
      const float* acc = q.gathered + (ii * n_head + h) * val_cols;
      std::copy(acc, acc + c, f + h * c);
      for (std::int64_t p = 0; p < p_v; ++p) {
        const float* g = acc + c + 3 * p;
        const Rigid::Vec3 local = frame.apply_inverse(Rigid::Vec3(g[0], g[1], g[2]));
        const std::int64_t hp = h * p_v + p;
        for (int d = 0; d < 3; ++d) f[off_points + d * n_head * p_v + hp] = local[d];
        f[off_norms + hp] =
            std::sqrt(local[0] * local[0] + local[1] * local[1] + local[2] * local[2] + kEps);
      }
    }
  }
}

BufferList<InvariantPointAttention::Held> InvariantPointAttention::held_buffers(
    std::int64_t n) const {
  const std::int64_t n_head = dims_.n_head, c = dims_.c_hidden, p_qk = dims_.n_qk_points;
  return {{&Held::q, DType::f32, Shape{n, n_head, c}},
          {&Held::q_points, DType::f32, Shape{n, n_head, 3 * p_qk}},
          {&Held::keys, DType::f32, Shape{n_head, c + 3 * p_qk, n}},
          {&Held::vals, DType::f32, Shape{n_head, n, c + 3 * dims_.n_v_points}},
          {&Held::mask, DType::f32, Shape{n}}};
}

BufferList<InvariantPointAttention::Local> InvariantPointAttention::local_buffers(
    std::int64_t n) const {
  const std::int64_t n_head = dims_.n_head, p_qk = dims_.n_qk_points;
  return {{&Local::kv, DType::f32, Shape{n, 2 * n_head * dims_.c_hidden}},
          {&Local::points, DType::f32, Shape{n, 3 * n_head * p_qk}},
          {&Local::kv_points, DType::f32, Shape{n, 3 * n_head * (p_qk + dims_.n_v_points)}}};
}

BufferList<InvariantPointAttention::SliceBuffers> InvariantPointAttention::slice_buffers(
    std::int64_t ni, std::int64_t n, bool pair_norm) const {
  const std::int64_t n_head = dims_.n_head;
  return BufferList<SliceBuffers>{{&SliceBuffers::bias, DType::f32, Shape{ni, n, n_head}},
                                  {&SliceBuffers::logits, DType::f32, Shape{ni, n_head, n}},
                                  {&SliceBuffers::gathered, DType::f32,
                                   Shape{ni, n_head, dims_.c_hidden + 3 * dims_.n_v_points}},
                                  {&SliceBuffers::feats, DType::f32, Shape{ni, c_concat()}}}
      .add_if(pair_norm, {&SliceBuffers::pair, DType::f32, Shape{ni, n, c_z_}});
}

std::size_t InvariantPointAttention::scratch_bytes(std::int64_t n_res, std::int64_t chunk,
                                                   bool pair_norm, bool accumulate) const {
  const std::size_t projections =
      local_buffers(n_res).bytes() +
      std::max({q_scalar_.scratch_bytes(n_res), kv_scalar_.scratch_bytes(n_res),
                q_point_local_.scratch_bytes(n_res), kv_point_local_.scratch_bytes(n_res)});
  const std::size_t step =
      largest_step(n_res, detail::chunk_rows(n_res, chunk), [&](std::int64_t ni) {
        return slice_buffers(ni, n_res, pair_norm).bytes() +
               std::max(attention_2d_.scratch_bytes(ni * n_res),
                        output_projection_.scratch_bytes(ni, {.accumulate = accumulate}));
      });
  return held_buffers(n_res).bytes() + std::max(projections, step);
}

}  // namespace cpufold
