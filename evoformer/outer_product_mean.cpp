#include "evoformer/outer_product_mean.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "memory/spill_window.h"
#include "memory/strided_access.h"
#include "ops/bf16_rows.h"
#include "ops/gemm.h"
#include "ops/row_chunks.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"
#include "ops/tensor_checks.h"

namespace cpufold {
namespace {

// Sequences whose projections a chunked forward() holds at once.
constexpr std::int64_t kSeqBlock = 64;
// Residues i whose outer products a chunked forward() reorders and projects at once: the
// reordered copy is c² floats per pair, as large as the outer products themselves.
constexpr std::int64_t kProjectRows = 8;
// MSA rows (sequence x residue) the right projection of a chunked forward() normalises and
// projects per call: one sequence at a time made the extra-MSA stack's recomputed projection
// 40,960 LayerNorm and Linear calls of 256 rows per block at N = 256, a third of its outer
// product mean's time; 4,096 rows are 1 MiB of LayerNorm output at c_m = 64.
constexpr std::int64_t kRightRows = 4096;
// Sequences summed per step when the right projection is recomputed for every slab: deep
// enough for an efficient GEMM, small beside the slab's outer products.
constexpr std::int64_t kSumBlock = 256;
// The most bytes of a step's right projection that a spilled plan reads back from a kept copy
// instead of recomputing: the pass over it holds a step staged and up to three in the page
// cache (memory/spill_window.h), which beyond about two spill slabs raised the smallest budget
// of a spilled plan (bf16 at N = 1,024, 1,024-sequence steps of 2 MiB per 32 residues: 545 to
// 723 MiB; fp32 at 2,500: 1.01 to 1.27 GiB).
constexpr std::size_t kApartStepBytes = 2 * kSpillSlabBytes;

// Sequences per right-projection call: kRightRows rows, at least one sequence.
std::int64_t right_block(std::int64_t n_seq, std::int64_t n_res) {
  return std::clamp<std::int64_t>(kRightRows / std::max<std::int64_t>(n_res, 1), 1,
                                  std::max<std::int64_t>(n_seq, 1));
}

// outer[(i, c1), (j, c2)] (+)= Σ_s a[s, i, c1]·b[s, j, c2] and norm[i, j] (+)= Σ_s
// mask[s, i0 + i]·mask[s, j] over `n_seq` sequences, for `ni` residues i from `a` (row stride
// lda) against all n_res residues j of `b` (row stride n_res·c); beta 0 overwrites, 1 adds.
// With a16 and b16 (a and b rounded to bf16, same layout) the outer products take oneDNN's bf16
// matmul with fp32 accumulation; the mask counts stay fp32.
struct OuterOperands {
  const float* a;
  const bf16* a16;
  std::int64_t lda;
  const float* b;
  const bf16* b16;
};

void outer_sums(GemmCache& gemm, const OuterOperands& x, const float* mask, std::int64_t i0,
                std::int64_t ni, std::int64_t n_seq, std::int64_t n_res, std::int64_t c, float beta,
                float* outer, float* norm) {
  const std::int64_t m = ni * c, n = n_res * c;
  bool ok = x.a16 != nullptr ? detail::gemm_bf16(gemm, true, false, m, n, n_seq, 1.f, x.a16, x.lda,
                                                 x.b16, n, beta, outer, n)
                             : detail::gemm_f32(gemm, true, false, m, n, n_seq, 1.f, x.a, x.lda,
                                                x.b, n, beta, outer, n);
  ok = ok && detail::sgemm(true, false, ni, n_res, n_seq, 1.f, mask + i0, n_res, mask, n_res, beta,
                           norm, n_res);
  if (!ok) {
    gemm.throw_if_out_of_memory();
    throw InternalError("OuterProductMean: oneDNN rejected [" + std::to_string(m) + " x " +
                        std::to_string(n_seq) + "] x [" + std::to_string(n_seq) + " x " +
                        std::to_string(n) + "]" + (x.a16 != nullptr ? " in bf16" : ""));
  }
}

// rows[t] *= mask(t) over n rows of c channels and, with dst, the rows rounded into dst in the
// same pass (a block of rows at a time, while it is in cache). A weight of 1 (nearly every row)
// skips its multiply: x·1 is x.
template <typename Mask>
void mask_rows(float* rows, std::int64_t n, std::int64_t c, const Mask& mask, bf16* dst) {
  constexpr std::int64_t kBlock = 256;
  const auto& kernels = detail::row_kernels();
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n * c >= (1 << 14))
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t t0 = b * kBlock, t1 = std::min(n, t0 + kBlock);
    for (std::int64_t t = t0; t < t1; ++t) {
      const float w = mask(t);
      if (w == 1.f) continue;
      float* const row = rows + t * c;
      for (std::int64_t k = 0; k < c; ++k) row[k] *= w;
    }
    if (dst != nullptr) kernels.to_bf16(rows + t0 * c, dst + t0 * c, (t1 - t0) * c);
  }
}

// dst = bf16(src) over n floats, in parallel blocks.
void round_to_bf16(const float* src, bf16* dst, std::int64_t n) {
  constexpr std::int64_t kBlock = 4096;
  const auto& kernels = detail::row_kernels();
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (std::int64_t k = 0; k < blocks; ++k) {
    kernels.to_bf16(src + k * kBlock, dst + k * kBlock, std::min(kBlock, n - k * kBlock));
  }
}

}  // namespace

OuterProductMean::OuterProductMean(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                                   std::int64_t c_hidden)
    : c_m_(c_m),
      c_z_(c_z),
      c_(c_hidden),
      norm_((scope / "layer_norm_input").layer_norm(c_m)),
      left_((scope / "left_projection").linear({c_m, c_hidden})),
      right_((scope / "right_projection").linear({c_m, c_hidden})),
      output_(scope.get("output_w", {c_hidden, c_hidden, c_z}), scope.get("output_b", {c_z}), 2,
              scope.linear_source()) {}

void OuterProductMean::forward(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                               const RunContext& ctx) const {
  if (m.rank() != 3 || z.rank() != 3) {
    throw InternalError(
        "OuterProductMean needs m [n_seq, n_res, c_m] and z [n_res, n_res, c_z], "
        "got " +
        m.describe() + " and " + z.describe());
  }
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1), c = c_;
  detail::check_activation(m, Shape{n_seq, n_res, c_m_}, "OuterProductMean m");
  detail::check_f32(z, Shape{n_res, n_res, c_z_}, "OuterProductMean z");
  if (msa_mask.dtype() != DType::f32 || !(msa_mask.shape() == Shape{n_seq, n_res})) {
    throw InternalError("OuterProductMean msa_mask " + msa_mask.describe() + " does not match m " +
                        m.describe());
  }
  if (n_res == 0) return;
  if (ctx.chunk > 0) {
    forward_in_slabs(m, msa_mask, z, ctx);
    return;
  }
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  std::optional<GemmCache> own_gemm;
  GemmCache& gemm = given_or_own(ctx.gemm, own_gemm);
  const Projections w = projection_buffers(n_seq, n_res).allocate(arena);
  project_masked(m, msa_mask, w.mask, w.a, w.b, arena);
  // bf16 compute: the outer products read a and b rounded to bf16.
  bf16* const a16 = bf16_outer() ? w.a16.data_as<bf16>() : nullptr;
  bf16* const b16 = bf16_outer() ? w.b16.data_as<bf16>() : nullptr;
  if (bf16_outer()) {
    round_to_bf16(w.a.data_as<float>(), a16, w.a.numel());
    round_to_bf16(w.b.data_as<float>(), b16, w.b.numel());
  }

  // Alg. 10 lines 3-4, a slab of residues i at a time.
  const RowView vz = row_view(z, "OuterProductMean z");
  const std::int64_t res_rows = detail::chunk_rows(n_res, ctx.chunk);
  for (std::int64_t i0 = 0; i0 < n_res; i0 += res_rows) {
    const std::int64_t ni = std::min(res_rows, n_res - i0);
    ArenaScope chunk_scope(arena);
    const Products slab = product_buffers(ni, n_res).allocate(arena);
    // a and b as [n_seq, n_res·c] matrices.
    const OuterOperands x{w.a.data_as<float>() + i0 * c, a16 ? a16 + i0 * c : nullptr, n_res * c,
                          w.b.data_as<float>(), b16};
    outer_sums(gemm, x, w.mask.data_as<float>(), i0, ni, n_seq, n_res, c, 0.f,
               slab.outer.data_as<float>(), slab.norm.data_as<float>());
    add_update(slab.outer.data_as<float>(), slab.norm.data_as<float>(), slab.p, vz, i0, ni, n_res,
               arena);
  }
}

void OuterProductMean::project_masked(const Tensor& m, const Tensor& msa_mask, const Tensor& mask,
                                      const Tensor& a, const Tensor& b, Arena& arena) const {
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1), c = c_;
  float* mk = mask.data_as<float>();
  {
    const float* src = static_cast<const float*>(msa_mask.data());
    const std::int64_t s0 = msa_mask.stride(0), s1 = msa_mask.stride(1);
    for (std::int64_t s = 0; s < n_seq; ++s)
      for (std::int64_t r = 0; r < n_res; ++r) mk[s * n_res + r] = src[s * s0 + r * s1];
  }
  if (n_seq > 0) {
    ArenaScope x_scope(arena);
    const Tensor x = normed_buffers(n_seq, n_res).allocate(arena).x;
    norm_.forward(m, x);
    left_.forward(x, a, arena);
    right_.forward(x, b, arena);
  }
  float* ap = a.data_as<float>();
  float* bp = b.data_as<float>();
  const std::int64_t n_rows = n_seq * n_res;
#pragma omp parallel for schedule(static) if (n_rows * c >= (1 << 14))
  for (std::int64_t r = 0; r < n_rows; ++r) {
    const float w = mk[r];
    for (std::int64_t k = 0; k < c; ++k) {
      ap[r * c + k] *= w;
      bp[r * c + k] *= w;
    }
  }
}

void OuterProductMean::add_update(float* op, const float* np, const Tensor& p, const RowView& vz,
                                  std::int64_t i0, std::int64_t ni, std::int64_t n_res,
                                  Arena& arena) const {
  // z[i0 + i, j] += (Linear_out(outer[i, j]) / (norm[i, j] + eps), Alg. 10 lines 3-4, for p's
  // rows of residues i at a time.
  const std::int64_t c = c_, cz = c_z_, group = std::min(ni, p.dim(0));
  const auto& kernels = detail::row_kernels();
  bf16* const p16 = p.dtype() == DType::bf16 ? p.data_as<bf16>() : nullptr;
  float* const p32 = p16 == nullptr ? p.data_as<float>() : nullptr;
  for (std::int64_t g0 = 0; g0 < ni; g0 += group) {
    const std::int64_t ng = std::min(group, ni - g0), pairs = ng * n_res;
    // Reorder to [i, j, c1, c2] rows for the output projection; for a bf16 projection rounded
    // to bf16 on the way, as the Linear would round them (a pass over the rows fewer).
#pragma omp parallel for schedule(static) if (pairs * c * c >= (1 << 14))
    for (std::int64_t t = 0; t < pairs; ++t) {
      const std::int64_t i = g0 + t / n_res, j = t % n_res;
      for (std::int64_t c1 = 0; c1 < c; ++c1) {
        const float* src = op + (i * c + c1) * (n_res * c) + j * c;
        if (p16 != nullptr) {
          kernels.to_bf16(src, p16 + (t * c + c1) * c, c);
        } else {
          std::memcpy(p32 + (t * c + c1) * c, src, static_cast<std::size_t>(c) * sizeof(float));
        }
      }
    }
    // The projection lands in the outer buffer once all of it is reordered (it is dead then).
    ArenaScope scope(arena);
    const Update own = update_buffers(ng, ni, n_res).allocate(arena);
    const Tensor u = own.u.empty() ? Tensor(op, DType::f32, Shape{ng, n_res, cz}) : own.u;
    output_.forward(p.slice(0, 0, ng), u, arena);
    const float* up = static_cast<const float*>(u.data());
    const float* ng_norm = np + g0 * n_res;
#pragma omp parallel for schedule(static) if (pairs * cz >= (1 << 14))
    for (std::int64_t t = 0; t < pairs; ++t) {
      const float d = ng_norm[t] + kEpsilon;
      float* dst = vz.row((i0 + g0) * n_res + t);
      const float* src = up + t * cz;
      for (std::int64_t k = 0; k < cz; ++k) dst[k] += src[k] / d;
    }
  }
}

OuterProductMean::Slabs::Slabs(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res,
                               std::int64_t chunk, bool spilled)
    : n_seq(n_seq),
      n_res(n_res),
      ni_max(detail::chunk_rows(n_res, chunk)),
      sb_max(op.sequence_block(n_seq, ni_max)),
      xb_max(std::min(kSeqBlock, sb_max)),
      rb_max(std::min(right_block(n_seq, n_res), sb_max)),
      use_bf16(op.bf16_outer()),
      b_type(use_bf16 ? DType::bf16 : DType::f32),
      b_row_bytes(static_cast<std::size_t>(n_res * op.c_) * dtype_size(b_type)),
      keep_right(sb_max >= n_seq),
      apart(spilled && !keep_right &&
            static_cast<std::size_t>(sb_max) * b_row_bytes <= kApartStepBytes),
      left_apart(apart || (spilled && keep_right)),
      tiles((n_res + ni_max - 1) / std::max<std::int64_t>(ni_max, 1)) {}

BufferList<OuterProductMean::Projections> OuterProductMean::projection_buffers(
    std::int64_t n_seq, std::int64_t n_res) const {
  const Shape rows{n_seq, n_res, c_};
  return BufferList<Projections>{{&Projections::mask, DType::f32, Shape{n_seq, n_res}},
                                 {&Projections::a, DType::f32, rows},
                                 {&Projections::b, DType::f32, rows}}
      .add_if(bf16_outer(), {&Projections::a16, DType::bf16, rows})
      .add_if(bf16_outer(), {&Projections::b16, DType::bf16, rows});
}

BufferList<OuterProductMean::Normed> OuterProductMean::normed_buffers(std::int64_t n_seq,
                                                                      std::int64_t n_res) const {
  return {{&Normed::x, norm_type(), Shape{n_seq, n_res, c_m_}}};
}

BufferList<OuterProductMean::Products> OuterProductMean::product_buffers(std::int64_t ni,
                                                                         std::int64_t n_res) const {
  return {{&Products::outer, DType::f32, Shape{ni * c_, n_res * c_}},
          {&Products::norm, DType::f32, Shape{ni, n_res}},
          {&Products::p, projected_type(), Shape{ni, n_res, c_ * c_}}};
}

BufferList<OuterProductMean::Slabs> OuterProductMean::slab_buffers(const Slabs& w) const {
  const std::int64_t c = c_, n_res = w.n_res, ni = w.ni_max, sb = w.sb_max;
  return BufferList<Slabs>{
      {&Slabs::x, norm_type(), Shape{w.rb_max, n_res, c_m_}},
      {&Slabs::mb, DType::f32, Shape{sb, n_res}},
      {&Slabs::outer, DType::f32, Shape{ni * c, n_res * c}},
      {&Slabs::norm, DType::f32, Shape{ni, n_res}},
      {&Slabs::p, projected_type(), Shape{std::min(ni, kProjectRows), n_res, c * c}}}
      // Apart, fp32 rows go straight to Kept; bf16 ones are staged for rounding.
      .add_if(w.use_bf16 || !w.apart,
              {&Slabs::b, DType::f32, Shape{w.use_bf16 ? w.rb_max : sb, n_res, c}})
      .add_if(!w.left_apart, {&Slabs::xa, DType::f32, Shape{w.xb_max * ni, c_m_}})
      .add_if(!w.left_apart, {&Slabs::a, DType::f32, Shape{sb, ni, c}})
      .add_if(w.left_apart, {&Slabs::a_rows, DType::f32, Shape{w.rb_max, n_res, c}})
      .add_if(w.use_bf16 && !w.left_apart, {&Slabs::a_bf16, DType::bf16, Shape{sb, ni, c}})
      .add_if(w.use_bf16 && !w.apart, {&Slabs::b_bf16, DType::bf16, Shape{sb, n_res, c}});
}

BufferList<OuterProductMean::Kept> OuterProductMean::kept_buffers(const Slabs& w) const {
  return BufferList<Kept>()
      .add_if(w.apart, {&Kept::b, w.b_type, Shape{w.n_seq, w.n_res, c_}})
      .add_if(w.left_apart, {&Kept::a, w.b_type, Shape{w.tiles, w.n_seq, w.ni_max, c_}});
}

BufferList<OuterProductMean::Update> OuterProductMean::update_buffers(std::int64_t g,
                                                                      std::int64_t ni,
                                                                      std::int64_t n_res) const {
  return BufferList<Update>().add_if(g < ni || c_z_ > c_ * c_,
                                     {&Update::u, DType::f32, Shape{g, n_res, c_z_}});
}

void OuterProductMean::mask_block(const Slabs& w, const Tensor& msa_mask, std::int64_t first,
                                  std::int64_t end) const {
  const float* const src = static_cast<const float*>(msa_mask.data());
  const std::int64_t s0 = msa_mask.stride(0), s1 = msa_mask.stride(1), n_res = w.n_res;
  float* const mk = w.mb.data_as<float>();
  for (std::int64_t s = first; s < end; ++s) {
    for (std::int64_t r = 0; r < n_res; ++r) mk[(s - first) * n_res + r] = src[s * s0 + r * s1];
  }
}

// out[s - first] = mask ⊙ right(LayerNorm(m[s])) for sequences [first, end), rounded to bf16
// when out is bf16; the mask rows are w.mb's from 0.
void OuterProductMean::right_rows(const Slabs& w, const Tensor& m, std::int64_t first,
                                  std::int64_t end, const Tensor& out, Arena& arena,
                                  const Tensor& left_out) const {
  const std::int64_t n_res = w.n_res, c = c_;
  const float* const mk = w.mb.data_as<float>();
  // The windows' steps start at `first`: views of the rows from there. out is written in the
  // same steps (its own whole: the tensor it is part of, when it is a kept projection's rows).
  SpillWindow rows(m.slice(0, first, end), 0, w.rb_max, SpillWindow::Access::read, m.nbytes());
  SpillWindow dst_rows(out, 0, w.rb_max, SpillWindow::Access::write,
                       w.apart ? static_cast<std::size_t>(w.n_seq) * w.b_row_bytes : 0);
  std::optional<SpillWindow> left_rows;
  if (!left_out.empty()) {
    left_rows.emplace(left_out, 1, w.rb_max, SpillWindow::Access::write,
                      kept_buffers(w).bytes_of(&Kept::a));
  }
  for (std::int64_t s = first; s < end; s += w.rb_max) {
    const std::int64_t ns = std::min(w.rb_max, end - s), r0 = s - first;
    const Tensor xs = w.x.slice(0, 0, ns);
    norm_.forward(rows.at(r0, r0 + ns), xs);
    const Tensor dst = dst_rows.at(r0, r0 + ns);
    const float* const block_mask = mk + r0 * n_res;
    if (left_rows) {
      // The left projection of the same normalised rows, masked as left_rows masks a slab's.
      float* const ap = w.a_rows.data_as<float>();
      left_.forward(xs, w.a_rows.slice(0, 0, ns), arena);
      mask_rows(
          ap, ns * n_res, c, [&](std::int64_t r) { return block_mask[r]; }, nullptr);
      tile_left_rows(w, ns, left_rows->at(r0, r0 + ns));
    }
    if (w.use_bf16 &&
        std::all_of(block_mask, block_mask + ns * n_res, [](float v) { return v == 1.f; })) {
      // No row to weigh (an MSA without padding): the projection rounds its fp32 result to bf16
      // as it stores it (one rounding, as mask_rows makes), without fp32 rows and a pass.
      right_.forward(xs, dst, arena);
      continue;
    }
    const Tensor f32_rows = w.use_bf16 ? w.b.slice(0, 0, ns) : dst;
    right_.forward(xs, f32_rows, arena);
    mask_rows(
        f32_rows.data_as<float>(), ns * n_res, c, [&](std::int64_t r) { return block_mask[r]; },
        w.use_bf16 ? dst.data_as<bf16>() : nullptr);
  }
  dst_rows.finish();
  if (left_rows) left_rows->finish();
}

void OuterProductMean::tile_left_rows(const Slabs& w, std::int64_t ns,
                                      const Tensor& left_out) const {
  const std::int64_t n_res = w.n_res, ni = w.ni_max, c = c_, runs = w.tiles * ns;
  const float* const ap = w.a_rows.data_as<float>();
  const auto to_bf16 = detail::row_kernels().to_bf16;
#pragma omp parallel for schedule(static) if (runs * ni * c >= (1 << 14))
  for (std::int64_t r = 0; r < runs; ++r) {
    const std::int64_t t = r / ns, s = r % ns, i0 = t * ni, n = std::min(ni, n_res - i0) * c;
    const float* const src = ap + (s * n_res + i0) * c;
    const std::int64_t at = t * left_out.stride(0) + s * left_out.stride(1);
    if (w.use_bf16) {
      to_bf16(src, left_out.data_as<bf16>() + at, n);
    } else {
      std::memcpy(left_out.data_as<float>() + at, src, static_cast<std::size_t>(n) * sizeof(float));
    }
  }
}

// a = left(LayerNorm(m[s, i])) for the slab's residues (`slab`: m's [n_seq, ni, c_m] columns
// from i0 on) and the step's sequences [s0, s0 + sb), masked (bf16: rounded into a16).
void OuterProductMean::left_rows(const Slabs& w, const Tensor& slab, std::int64_t i0,
                                 std::int64_t ni, std::int64_t s0, std::int64_t sb,
                                 Arena& arena) const {
  const std::int64_t n_res = w.n_res, c = c_;
  float* const ap = w.a.data_as<float>();
  for (std::int64_t x0 = 0; x0 < sb; x0 += w.xb_max) {
    const std::int64_t xn = std::min(w.xb_max, sb - x0);
    for (std::int64_t s = 0; s < xn; ++s) {
      float* const dst = w.xa.data_as<float>() + s * ni * c_m_;
      const std::int64_t at = (s0 + x0 + s) * slab.stride(0);
      if (slab.dtype() == DType::bf16) {
        detail::bf16_to_f32(static_cast<const bf16*>(slab.data()) + at, dst, ni * c_m_);
      } else {
        std::memcpy(dst, static_cast<const float*>(slab.data()) + at,
                    static_cast<std::size_t>(ni * c_m_) * sizeof(float));
      }
    }
    const Tensor xs = w.xa.slice(0, 0, xn * ni);
    norm_.forward(xs, xs);
    left_.forward(xs, Tensor(ap + x0 * ni * c, DType::f32, Shape{xn * ni, c}), arena);
  }
  const float* const mk = w.mb.data_as<float>();
  mask_rows(
      ap, sb * ni, c, [&](std::int64_t t) { return mk[t / ni * n_res + i0 + t % ni]; }, w.a16());
  // A short last slab's rows spread to the full slab's stride, the stride of a kept tile: oneDNN
  // may sum a product in another order for another leading dimension, and a spilled plan's
  // outer products must be the same bits as this one's.
  if (ni < w.ni_max) {
    const auto spread = [&](auto* rows) {
      for (std::int64_t s = sb - 1; s > 0; --s) {
        std::memmove(rows + s * w.ni_max * c, rows + s * ni * c,
                     static_cast<std::size_t>(ni * c) * sizeof(*rows));
      }
    };
    if (w.use_bf16) {
      spread(w.a16());
    } else {
      spread(ap);
    }
  }
}

void OuterProductMean::forward_in_slabs(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                                        const RunContext& ctx) const {
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1), c = c_;
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  Arena& apart = ctx.activation_arena();
  ArenaScope apart_scope(apart);
  Slabs w(*this, n_seq, n_res, ctx.chunk, ctx.activations != nullptr);
  slab_buffers(w).allocate_into(arena, w);
  const Kept kept = kept_buffers(w).allocate(apart);
  std::optional<GemmCache> own_gemm;
  GemmCache& gemm = given_or_own(ctx.gemm, own_gemm);
  // The right projection of a block of sequences [s0, s0 + sb) in scratch: rows from 0.
  const auto scratch_rows = [&](std::int64_t sb) {
    return w.use_bf16 ? w.b_bf16.slice(0, 0, sb) : w.b.slice(0, 0, sb);
  };
  if (w.keep_right) {
    mask_block(w, msa_mask, 0, n_seq);
    right_rows(w, m, 0, n_seq, scratch_rows(n_seq), arena, w.left_apart ? kept.a : Tensor());
  }
  if (w.apart) {
    // In the recomputing path's blocks, so that every row comes out of the same calls.
    for (std::int64_t s0 = 0; s0 < n_seq; s0 += w.sb_max) {
      const std::int64_t s1 = std::min(n_seq, s0 + w.sb_max);
      mask_block(w, msa_mask, s0, s1);
      right_rows(w, m, s0, s1, kept.b.slice(0, s0, s1), arena, kept.a.slice(1, s0, s1));
    }
  }
  // Unless the left projection is kept, the slabs read a few residues of every sequence.
  std::optional<StridedAccess> column_pass;
  std::optional<SpillWindow> columns;
  if (!w.left_apart) {
    column_pass.emplace(m);
    columns.emplace(m, 1, w.ni_max, SpillWindow::Access::read);
  }
  SpillWindow z_rows(z, 0, w.ni_max, SpillWindow::Access::write);

  // For each slab of residues i the sum over sequences is accumulated block by block. Unless the
  // right projection is kept (sequence_block), it is recomputed for every slab, a block at a
  // time, or read back from ctx.activations.
  for (std::int64_t i0 = 0; i0 < n_res; i0 += w.ni_max) {
    const std::int64_t ni = std::min(w.ni_max, n_res - i0);
    const Tensor slab = columns ? columns->at(i0, i0 + ni) : Tensor();
    std::optional<SpillWindow> kept_rows, kept_left;
    if (w.apart) kept_rows.emplace(kept.b, 0, w.sb_max, SpillWindow::Access::read);
    if (w.left_apart) {
      kept_left.emplace(kept.a.select(0, i0 / w.ni_max), 0, w.sb_max, SpillWindow::Access::read,
                        kept.a.nbytes());
    }
    for (std::int64_t s0 = 0; s0 < n_seq; s0 += w.sb_max) {
      const std::int64_t sb = std::min(w.sb_max, n_seq - s0);
      if (!w.keep_right) mask_block(w, msa_mask, s0, s0 + sb);
      const Tensor b = w.apart ? kept_rows->at(s0, s0 + sb) : scratch_rows(sb);
      if (!w.keep_right && !w.apart) right_rows(w, m, s0, s0 + sb, b, arena);
      OuterOperands x{};
      if (kept_left) {
        const Tensor a = kept_left->at(s0, s0 + sb);
        x = {w.use_bf16 ? nullptr : a.data_as<float>(), w.use_bf16 ? a.data_as<bf16>() : nullptr,
             a.stride(0), nullptr, nullptr};
      } else {
        left_rows(w, slab, i0, ni, s0, sb, arena);
        x = {w.a.data_as<float>(), w.a16(), w.ni_max * c, nullptr, nullptr};
      }
      x.b = w.use_bf16 ? nullptr : b.data_as<float>();
      x.b16 = w.use_bf16 ? b.data_as<bf16>() : nullptr;
      // outer[(i, c1), (j, c2)] (+)= Σ_s a[s, i, c1]·b[s, j, c2]; norm likewise over the mask.
      outer_sums(gemm, x, w.mb.data_as<float>(), i0, ni, sb, n_res, c, s0 == 0 ? 0.f : 1.f,
                 w.outer.data_as<float>(), w.norm.data_as<float>());
    }
    if (kept_rows) kept_rows->finish();
    if (kept_left) kept_left->finish();
    if (n_seq == 0) {
      std::memset(w.outer.data(), 0, static_cast<std::size_t>(ni * c * n_res * c) * sizeof(float));
      std::memset(w.norm.data(), 0, static_cast<std::size_t>(ni * n_res) * sizeof(float));
    }
    const Tensor z_slab = z_rows.at(i0, i0 + ni);
    add_update(w.outer.data_as<float>(), w.norm.data_as<float>(), w.p,
               row_view(z_slab, "OuterProductMean z"), 0, ni, n_res, arena);
  }
  z_rows.finish();
  // Kept projections the page cache held (not streamed) leave no pages behind.
  if (w.apart) apart.evict(kept.b.data(), kept.b.nbytes());
  if (w.left_apart) apart.evict(kept.a.data(), kept.a.nbytes());
}

// Keeping the right projection of the whole MSA (n_seq·n_res·c floats) saves recomputing it for
// every slab of ni residues, which costs c_m/(ni·c) of the outer products' work. It is kept
// while it is at most twice the slab's MSA rows (n_seq·c <= 2·ni·c_m·c, i.e. n_seq <= 2·ni·c_m):
// bounded by the chunk, and where it is not kept recomputing is cheap (c_m/(ni·c) <
// n_seq/(2·ni²·c)). With AF2's widths: the Evoformer's 516 rows (c_m = 256) from 2 residues per
// slab on; the 5,120 extra rows (c_m = 64) from 40 on, recomputed at 6% of the outer products' work
// at 32.
std::int64_t OuterProductMean::sequence_block(std::int64_t n_seq, std::int64_t slab_rows) const {
  const bool keep = n_seq <= 2 * slab_rows * c_m_;
  // bf16 holds the block's right projection in bf16 only: twice the sequences in the same
  // bytes, and a deeper sum per GEMM call, each of which reads and rewrites the fp32 sums:
  // [1024 x 8192] sums (a slab of 32 residues at N = 256) with K = 512 run at 540-556 GFLOP/s,
  // with K = 1,024 at 570-580 (oneDNN's 1024³ peak 691-709 in the same runs; 256 was 10%
  // slower than 512).
  const std::int64_t block = bf16_outer() ? 4 * kSumBlock : kSumBlock;
  return std::max<std::int64_t>(1, keep ? n_seq : std::min(n_seq, block));
}

std::size_t OuterProductMean::apart_bytes(std::int64_t n_seq, std::int64_t n_res,
                                          std::int64_t chunk) const {
  if (chunk <= 0 || n_res == 0) return 0;
  return kept_buffers(Slabs(*this, n_seq, n_res, chunk, true)).bytes();
}

std::size_t OuterProductMean::spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                  std::int64_t chunk, DType m_type,
                                                  std::size_t cache_bytes) const {
  const std::size_t msa = static_cast<std::size_t>(n_seq * n_res * c_m_) * dtype_size(m_type);
  const std::size_t m_bytes = msa <= cache_bytes ? 0 : msa;
  if (chunk <= 0 || n_res == 0) return m_bytes;
  const Slabs w(*this, n_seq, n_res, chunk, true);
  const auto slabs = static_cast<std::size_t>(w.tiles);
  const BufferList<Kept> kept = kept_buffers(w);
  const std::size_t right = kept.bytes_of(&Kept::b), left = kept.bytes_of(&Kept::a);
  // Kept right: one pass over m makes it, and the left projection's tiles written beside it are
  // read back once.
  if (w.keep_right) return m_bytes + 2 * left;
  // Recomputed: a pass over m per slab, and the slabs' column pass.
  if (!w.apart) return m_bytes * (1 + slabs);
  // One pass over m writes both projections; the right one is read back per slab (once when
  // cached), the left one's tiles once.
  return m_bytes + (right <= cache_bytes ? 2 * right : right * (1 + slabs)) + 2 * left;
}

std::size_t OuterProductMean::spill_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                 std::int64_t chunk, DType m_type) const {
  if (chunk <= 0 || n_res == 0) return 0;
  const Slabs w(*this, n_seq, n_res, chunk, true);
  const std::size_t m_index = static_cast<std::size_t>(c_m_) * dtype_size(m_type);
  constexpr auto read = SpillWindow::Access::read;
  const auto m_rows = [&](std::int64_t step) {
    return SpillWindow::resident_bytes(1, n_seq, static_cast<std::size_t>(n_res) * m_index, step,
                                       read);
  };
  const std::size_t columns = SpillWindow::resident_bytes(n_seq, n_res, m_index, w.ni_max, read);
  if (!w.left_apart) return columns + m_rows(w.rb_max);
  const std::size_t tile_row = static_cast<std::size_t>(w.ni_max * c_) * dtype_size(w.b_type);
  if (w.keep_right) {
    // One pass over m, the left projection's tiles written beside it; then each slab reads its
    // tile back.
    return std::max(
        m_rows(w.rb_max) + SpillWindow::resident_bytes(w.tiles, n_seq, tile_row, w.rb_max),
        SpillWindow::resident_bytes(1, n_seq, tile_row, w.sb_max, read));
  }
  // Written in the recomputing path's blocks (right_rows: a pass per block of sb sequences),
  // the left projection's tiles beside the right one's rows; then each slab reads them back.
  const std::size_t written = SpillWindow::resident_bytes(1, w.sb_max, w.b_row_bytes, w.rb_max) +
                              SpillWindow::resident_bytes(w.tiles, w.sb_max, tile_row, w.rb_max);
  const std::size_t reads = SpillWindow::resident_bytes(1, n_seq, w.b_row_bytes, w.sb_max, read) +
                            SpillWindow::resident_bytes(1, n_seq, tile_row, w.sb_max, read);
  return std::max(m_rows(w.rb_max) + written, reads);
}

std::size_t OuterProductMean::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                            std::int64_t chunk, bool apart) const {
  if (n_res == 0) return 0;
  return chunk > 0 ? slabs_scratch_bytes(n_seq, n_res, chunk, apart)
                   : whole_msa_scratch_bytes(n_seq, n_res, chunk);
}

std::size_t OuterProductMean::slabs_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                  std::int64_t chunk, bool apart) const {
  const Slabs w(*this, n_seq, n_res, chunk, apart);
  const std::size_t update = largest_step(
      n_res, w.ni_max, [&](std::int64_t ni) { return update_bytes(ni, kProjectRows, n_res); });
  return slab_buffers(w).bytes() + std::max(slab_projection_bytes(w), update);
}

std::size_t OuterProductMean::slab_projection_bytes(const Slabs& w) const {
  const EpilogueKind normed{.bf16_in = bf16_norm()};
  const EpilogueKind normed_to_bf16{.bf16_out = true, .bf16_in = bf16_norm()};
  const std::int64_t n_seq = w.n_seq, n_res = w.n_res, ni = w.ni_max, sb = w.sb_max;
  const std::int64_t rb = w.rb_max, xb = w.xb_max;
  std::size_t bytes = 0;
  for (std::int64_t s : {rb, sb % rb, n_seq % sb % rb}) {
    if (s == 0) continue;
    bytes = std::max(bytes, right_.scratch_bytes(s * n_res, normed));
    if (w.use_bf16) bytes = std::max(bytes, right_.scratch_bytes(s * n_res, normed_to_bf16));
    if (w.left_apart) bytes = std::max(bytes, left_.scratch_bytes(s * n_res, normed));
  }
  for (std::int64_t s : {xb, sb % xb, n_seq % sb % xb}) {
    if (w.left_apart) break;  // the left projection is made with the right one's blocks, above
    for (std::int64_t i : {ni, n_res % ni}) {
      if (s > 0 && i > 0) bytes = std::max(bytes, left_.scratch_bytes(s * i));
    }
  }
  return bytes;
}

std::size_t OuterProductMean::update_bytes(std::int64_t ni, std::int64_t group,
                                           std::int64_t n_res) const {
  const EpilogueKind projected{.bf16_in = projected_type() == DType::bf16};
  return largest_step(ni, std::min(ni, group), [&](std::int64_t g) {
    return update_buffers(g, ni, n_res).bytes() + output_.scratch_bytes(g * n_res, projected);
  });
}

std::size_t OuterProductMean::whole_msa_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                      std::int64_t chunk) const {
  const EpilogueKind normed{.bf16_in = bf16_norm()};
  const std::size_t project = n_seq == 0
                                  ? 0
                                  : normed_buffers(n_seq, n_res).bytes() +
                                        std::max(left_.scratch_bytes(n_seq * n_res, normed),
                                                 right_.scratch_bytes(n_seq * n_res, normed));
  const std::size_t slab =
      largest_step(n_res, detail::chunk_rows(n_res, chunk), [&](std::int64_t ni) {
        return product_buffers(ni, n_res).bytes() + update_bytes(ni, ni, n_res);
      });
  return projection_buffers(n_seq, n_res).bytes() + std::max(project, slab);
}

}  // namespace cpufold
