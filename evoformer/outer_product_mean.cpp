#include "evoformer/outer_product_mean.h"

#include <algorithm>
#include <bit>
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
// Sequences summed per step of a tile pair: deep enough for an efficient GEMM, small beside the
// tile's outer products. bf16 sums four times as many per step, in the same bytes as fp32's
// twice: each GEMM call reads and rewrites the fp32 sums, and [1024 x 8192] sums (a slab of 32
// residues at N = 256) ran at 540-556 GFLOP/s with K = 512 and at 570-580 with K = 1,024
// (oneDNN's 1024³ peak 691-709 in the same runs; 256 was 10% slower than 512).
constexpr std::int64_t kSumBlock = 256;
// The most bytes of a step of one tile's kept projection: a pass reading it back holds a step
// staged and up to three in the page cache (memory/spill_window.h), which beyond about two
// spill slabs raised the smallest budget of a spilled plan (measured on the slabs of an earlier
// layout: bf16 at N = 1,024 from 545 to 723 MiB, fp32 at 2,500 from 1.01 to 1.27 GiB).
constexpr std::size_t kApartStepBytes = 2 * kSpillSlabBytes;

// Sequences per right-projection call: kRightRows rows, at least one sequence.
std::int64_t right_block(std::int64_t n_seq, std::int64_t n_res) {
  return std::clamp<std::int64_t>(kRightRows / std::max<std::int64_t>(n_res, 1), 1,
                                  std::max<std::int64_t>(n_seq, 1));
}

// Residues per side of a tile pair whose outer products take as much room as a slab of ni
// residues against all n_res: n_res cut into the fewest k tiles with k²·ni >= n_res.
std::int64_t tile_residues(std::int64_t n_res, std::int64_t ni) {
  std::int64_t k = 1;
  while (k * k * ni < n_res) ++k;
  return (n_res + k - 1) / k;
}

// Residues per side of the square blocks of a slab whose outer products take no more room than
// ni residues against all n_res: a power of two (a whole number of them is about a spill slab of
// the pair's rows, 4 MiB at N = 256), at least one.
std::int64_t block_residues(std::int64_t n_res, std::int64_t ni) {
  return static_cast<std::int64_t>(std::bit_floor(
      static_cast<std::uint64_t>(std::max<std::int64_t>(tile_residues(n_res, ni), 1))));
}

// Residues i per slab (and j per block) for slabs of `rows` residues: square blocks, no more rows
// of the pair than a spill slab of them holds (a power of two of them) or the chunk's rows, so
// that a spilled pair's pass over the slabs stages what the chunk's row passes stage.
std::int64_t slab_residues(std::int64_t n_res, std::int64_t c_z, std::int64_t rows) {
  const std::int64_t pair_slab =
      SpillWindow::default_slab_length(1, n_res, f32_bytes({n_res, c_z}), 1);
  const auto pair_rows = static_cast<std::int64_t>(
      std::bit_floor(static_cast<std::uint64_t>(std::max<std::int64_t>(pair_slab, 1))));
  return std::min(block_residues(n_res, rows), std::max(rows, pair_rows));
}

// dst[t, s, i] = src[s, t·tile + i] for ns sequences of n_res residues of c channels, tiles of
// `tile` residues (dst: [tiles, ns, tile, c] with any strides for its first two axes), rounded
// to dst's type.
void tile_rows(const float* src, std::int64_t ns, std::int64_t n_res, std::int64_t tile,
               std::int64_t c, const Tensor& dst) {
  const std::int64_t tiles = dst.dim(0), runs = tiles * ns;
  const auto to_bf16 = detail::row_kernels().to_bf16;
  const bool rounded = dst.dtype() == DType::bf16;
#pragma omp parallel for schedule(static) if (runs * tile * c >= (1 << 14))
  for (std::int64_t r = 0; r < runs; ++r) {
    const std::int64_t t = r / ns, s = r % ns, i0 = t * tile, n = std::min(tile, n_res - i0) * c;
    const float* const from = src + (s * n_res + i0) * c;
    const std::int64_t at = t * dst.stride(0) + s * dst.stride(1);
    if (rounded) {
      to_bf16(from, dst.data_as<bf16>() + at, n);
    } else {
      std::memcpy(dst.data_as<float>() + at, from, static_cast<std::size_t>(n) * sizeof(float));
    }
  }
}

// outer[(i, c1), (j, c2)] (+)= Σ_s a[s, i, c1]·b[s, j, c2] and norm[i, j] (+)= Σ_s
// mask[s, i0 + i]·mask[s, j0 + j] over `n_seq` sequences, for `ni` residues i from `a` (row
// stride lda) against `nj` residues j from `b` (row stride ldb), the mask's rows n_res long;
// beta 0 overwrites, 1 adds. With a16 and b16 (a and b rounded to bf16, same layout) the outer
// products take oneDNN's bf16 matmul with fp32 accumulation; the mask counts stay fp32.
struct OuterOperands {
  const float* a;
  const bf16* a16;
  std::int64_t lda;
  const float* b;
  const bf16* b16;
  std::int64_t ldb;
};
struct OuterBlockShape {
  std::int64_t i0, ni, j0, nj, n_res;
};

void outer_sums(GemmCache& gemm, const OuterOperands& x, const float* mask,
                const OuterBlockShape& r, std::int64_t n_seq, std::int64_t c, float beta,
                float* outer, std::int64_t ldc, float* norm, std::int64_t ld_norm) {
  const std::int64_t m = r.ni * c, n = r.nj * c;
  bool ok = x.a16 != nullptr ? detail::gemm_bf16(gemm, true, false, m, n, n_seq, 1.f, x.a16, x.lda,
                                                 x.b16, x.ldb, beta, outer, ldc)
                             : detail::gemm_f32(gemm, true, false, m, n, n_seq, 1.f, x.a, x.lda,
                                                x.b, x.ldb, beta, outer, ldc);
  ok = ok && detail::sgemm(true, false, r.ni, r.nj, n_seq, 1.f, mask + r.i0, r.n_res, mask + r.j0,
                           r.n_res, beta, norm, ld_norm);
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
    if (keeps_right(n_seq, detail::chunk_rows(n_res, ctx.chunk))) {
      forward_in_slabs(m, msa_mask, z, ctx);
    } else {
      forward_in_tiles(m, msa_mask, z, ctx);
    }
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
  const std::int64_t res_rows = detail::chunk_rows(n_res, ctx.chunk);
  for (std::int64_t i0 = 0; i0 < n_res; i0 += res_rows) {
    const std::int64_t ni = std::min(res_rows, n_res - i0);
    ArenaScope chunk_scope(arena);
    const Products slab = product_buffers(ni, n_res).allocate(arena);
    // a and b as [n_seq, n_res·c] matrices.
    const OuterOperands x{w.a.data_as<float>() + i0 * c,
                          a16 ? a16 + i0 * c : nullptr,
                          n_res * c,
                          w.b.data_as<float>(),
                          b16,
                          n_res * c};
    outer_sums(gemm, x, w.mask.data_as<float>(), {i0, ni, 0, n_res, n_res}, n_seq, c, 0.f,
               slab.outer.data_as<float>(), n_res * c, slab.norm.data_as<float>(), n_res);
    add_update({slab.outer.data_as<float>(), n_res * c, slab.norm.data_as<float>(), n_res}, slab.p,
               z.slice(0, i0, i0 + ni), arena);
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

void OuterProductMean::add_update(const OuterBlock& x, const Tensor& p, const Tensor& z_block,
                                  Arena& arena) const {
  // z[i, j] += (Linear_out(outer[i, j]) / (norm[i, j] + eps), Alg. 10 lines 3-4, for p's rows of
  // residues i at a time.
  const std::int64_t c = c_, cz = c_z_, ni = z_block.dim(0), nj = z_block.dim(1);
  const std::int64_t group = std::min(ni, p.dim(0));
  if (z_block.stride(2) != 1) {
    throw InternalError("OuterProductMean z block " + z_block.describe() + " has strided rows");
  }
  float* const zp = z_block.data_as<float>();
  const std::int64_t zi = z_block.stride(0), zj = z_block.stride(1);
  const auto& kernels = detail::row_kernels();
  bf16* const p16 = p.dtype() == DType::bf16 ? p.data_as<bf16>() : nullptr;
  float* const p32 = p16 == nullptr ? p.data_as<float>() : nullptr;
  for (std::int64_t g0 = 0; g0 < ni; g0 += group) {
    const std::int64_t ng = std::min(group, ni - g0), pairs = ng * nj;
    // Reorder to [i, j, c1, c2] rows for the output projection; for a bf16 projection rounded
    // to bf16 on the way, as the Linear would round them (a pass over the rows fewer).
#pragma omp parallel for schedule(static) if (pairs * c * c >= (1 << 14))
    for (std::int64_t t = 0; t < pairs; ++t) {
      const std::int64_t i = g0 + t / nj, j = t % nj;
      for (std::int64_t c1 = 0; c1 < c; ++c1) {
        const float* src = x.outer + (i * c + c1) * x.ld + j * c;
        if (p16 != nullptr) {
          kernels.to_bf16(src, p16 + (t * c + c1) * c, c);
        } else {
          std::memcpy(p32 + (t * c + c1) * c, src, static_cast<std::size_t>(c) * sizeof(float));
        }
      }
    }
    // The projection lands in the outer buffer once all of it is reordered (it is dead then).
    ArenaScope scope(arena);
    const Update own = update_buffers(ng, ni, nj).allocate(arena);
    const Tensor u = own.u.empty() ? Tensor(x.outer, DType::f32, Shape{ng, nj, cz}) : own.u;
    output_.forward(Tensor(p.data(), p.dtype(), Shape{ng, nj, c * c}), u, arena);
    const float* up = static_cast<const float*>(u.data());
#pragma omp parallel for schedule(static) if (pairs * cz >= (1 << 14))
    for (std::int64_t t = 0; t < pairs; ++t) {
      const std::int64_t i = g0 + t / nj, j = t % nj;
      const float d = x.norm[i * x.ld_norm + j] + kEpsilon;
      float* dst = zp + i * zi + j * zj;
      const float* src = up + t * cz;
      for (std::int64_t k = 0; k < cz; ++k) dst[k] += src[k] / d;
    }
  }
}

OuterProductMean::Slabs::Slabs(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res,
                               std::int64_t chunk, bool spilled)
    : n_seq(n_seq),
      n_res(n_res),
      ni_max(slab_residues(n_res, op.c_z_, detail::chunk_rows(n_res, chunk))),
      // Square blocks where the slab is wider than the chunk; where the pair's spill slab caps it
      // at the chunk (N >= 512 or so), slabs against all j as before, not many small GEMMs.
      nj_max(ni_max > detail::chunk_rows(n_res, chunk) ? ni_max : std::max<std::int64_t>(n_res, 1)),
      xb_max(std::min(kSeqBlock, std::max<std::int64_t>(n_seq, 1))),
      rb_max(right_block(n_seq, n_res)),
      use_bf16(op.bf16_outer()),
      b_type(use_bf16 ? DType::bf16 : DType::f32),
      left_apart(spilled),
      tiles((n_res + ni_max - 1) / std::max<std::int64_t>(ni_max, 1)),
      j_tiles((n_res + nj_max - 1) / std::max<std::int64_t>(nj_max, 1)) {}

OuterProductMean::Tiles::Tiles(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res,
                               std::int64_t chunk, bool spilled)
    : n_seq(n_seq),
      n_res(n_res),
      tile(tile_residues(n_res, detail::chunk_rows(n_res, chunk))),
      tiles((n_res + tile - 1) / std::max<std::int64_t>(tile, 1)),
      use_bf16(op.bf16_outer()),
      b_type(use_bf16 ? DType::bf16 : DType::f32),
      apart(spilled) {
  const std::size_t tile_row = static_cast<std::size_t>(tile * op.c_) * dtype_size(b_type);
  const std::int64_t block = use_bf16 ? 4 * kSumBlock : kSumBlock;
  const auto step_cap =
      static_cast<std::int64_t>(kApartStepBytes / std::max<std::size_t>(tile_row, 1));
  // Steps of a power of two of sequences: a tile's row (tile·c values) is rarely a whole number
  // of pages, and a spill slab is a whole number of steps that is also a whole number of pages
  // per run (memory/spill_window.h), which for 43 residues and steps of 10 sequences took
  // slabs of 160 sequences, 10 MiB.
  const auto pow2 = [](std::int64_t v) {
    return static_cast<std::int64_t>(
        std::bit_floor(static_cast<std::uint64_t>(std::max<std::int64_t>(v, 1))));
  };
  sb_max = std::min(pow2(std::min(block, step_cap)), std::max<std::int64_t>(n_seq, 1));
  xb_max = std::min(kSeqBlock, sb_max);
  // keep_tiles' blocks of rows hold no more residues than a LayerNorm block of project_columns,
  // so that keeping the projections apart takes less scratch than making them per tile pair.
  rb_max = pow2(std::clamp<std::int64_t>(xb_max * tile / std::max<std::int64_t>(n_res, 1), 1,
                                         std::min(right_block(n_seq, n_res), sb_max)));
}

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
  const std::int64_t c = c_, n_seq = w.n_seq, n_res = w.n_res, ni = w.ni_max;
  return BufferList<Slabs>{
      {&Slabs::x, norm_type(), Shape{w.rb_max, n_res, c_m_}},
      {&Slabs::mb, DType::f32, Shape{n_seq, n_res}},
      {&Slabs::outer, DType::f32, Shape{ni * c, w.nj_max * c}},
      {&Slabs::norm, DType::f32, Shape{ni, w.nj_max}},
      {&Slabs::p, projected_type(), Shape{std::min(ni, kProjectRows), w.nj_max, c * c}},
      {&Slabs::b, DType::f32, Shape{w.rb_max, n_res, c}},
      {&Slabs::b_kept, w.b_type, Shape{w.j_tiles, n_seq, w.nj_max, c}}}
      .add_if(!w.left_apart, {&Slabs::xa, DType::f32, Shape{w.xb_max * ni, c_m_}})
      .add_if(!w.left_apart, {&Slabs::a, DType::f32, Shape{n_seq, ni, c}})
      .add_if(w.left_apart, {&Slabs::a_rows, DType::f32, Shape{w.rb_max, n_res, c}})
      .add_if(w.use_bf16 && !w.left_apart, {&Slabs::a_bf16, DType::bf16, Shape{n_seq, ni, c}});
}

BufferList<OuterProductMean::KeptLeft> OuterProductMean::kept_left_buffers(const Slabs& w) const {
  return BufferList<KeptLeft>().add_if(
      w.left_apart, {&KeptLeft::a, w.b_type, Shape{w.tiles, w.n_seq, w.ni_max, c_}});
}

BufferList<OuterProductMean::Tiles> OuterProductMean::tile_buffers(const Tiles& w) const {
  const std::int64_t c = c_, n_res = w.n_res, t = w.tile, sb = w.sb_max;
  const Shape step{sb, t, c};
  return BufferList<Tiles>{
      {&Tiles::mb, DType::f32, Shape{sb, n_res}},
      {&Tiles::outer, DType::f32, Shape{t * c, t * c}},
      {&Tiles::norm, DType::f32, Shape{t, t}},
      {&Tiles::p, projected_type(), Shape{std::min(t, kProjectRows), t, c * c}}}
      .add_if(w.apart, {&Tiles::x, norm_type(), Shape{w.rb_max, n_res, c_m_}})
      .add_if(w.apart, {&Tiles::rows, DType::f32, Shape{w.rb_max, n_res, c}})
      .add_if(!w.apart, {&Tiles::xa, DType::f32, Shape{w.xb_max * t, c_m_}})
      .add_if(!w.apart, {&Tiles::a, DType::f32, step})
      .add_if(!w.apart, {&Tiles::b, DType::f32, step})
      .add_if(!w.apart && w.use_bf16, {&Tiles::a_bf16, DType::bf16, step})
      .add_if(!w.apart && w.use_bf16, {&Tiles::b_bf16, DType::bf16, step});
}

BufferList<OuterProductMean::KeptTiles> OuterProductMean::kept_tile_buffers(const Tiles& w) const {
  return BufferList<KeptTiles>().add_if(
      w.apart, {&KeptTiles::ab, w.b_type, Shape{2 * w.tiles, w.n_seq, w.tile, c_}});
}

BufferList<OuterProductMean::Update> OuterProductMean::update_buffers(std::int64_t g,
                                                                      std::int64_t ni,
                                                                      std::int64_t n_j) const {
  return BufferList<Update>().add_if(g < ni || c_z_ > c_ * c_,
                                     {&Update::u, DType::f32, Shape{g, n_j, c_z_}});
}

void OuterProductMean::mask_block(const Tensor& mb, const Tensor& msa_mask, std::int64_t first,
                                  std::int64_t end) {
  const float* const src = static_cast<const float*>(msa_mask.data());
  const std::int64_t s0 = msa_mask.stride(0), s1 = msa_mask.stride(1), n_res = msa_mask.dim(1);
  float* const mk = mb.data_as<float>();
  for (std::int64_t s = first; s < end; ++s) {
    for (std::int64_t r = 0; r < n_res; ++r) mk[(s - first) * n_res + r] = src[s * s0 + r * s1];
  }
}

// w.b_kept = mask ⊙ right(LayerNorm(m)) for every sequence, in blocks of residues j, rounded to
// bf16 when b_kept is bf16, with the left projection's tiles beside it when left_out is given.
void OuterProductMean::right_rows(const Slabs& w, const Tensor& m, Arena& arena,
                                  const Tensor& left_out) const {
  const std::int64_t n_res = w.n_res, c = c_;
  const float* const mk = w.mb.data_as<float>();
  SpillWindow rows(m, 0, w.rb_max, SpillWindow::Access::read, SpillWindow::kAlwaysStaged);
  std::optional<SpillWindow> left_rows;
  if (!left_out.empty()) {
    left_rows.emplace(left_out, 1, w.rb_max, SpillWindow::Access::write,
                      SpillWindow::kAlwaysStaged);
  }
  for (std::int64_t s = 0; s < w.n_seq; s += w.rb_max) {
    const std::int64_t ns = std::min(w.rb_max, w.n_seq - s);
    const Tensor xs = w.x.slice(0, 0, ns);
    norm_.forward(rows.at(s, s + ns), xs);
    const float* const block_mask = mk + s * n_res;
    const auto weight = [&](std::int64_t r) { return block_mask[r]; };
    if (left_rows) {
      // The left projection of the same normalised rows, masked as project_columns masks a
      // slab's.
      float* const ap = w.a_rows.data_as<float>();
      left_.forward(xs, w.a_rows.slice(0, 0, ns), arena);
      mask_rows(ap, ns * n_res, c, weight, nullptr);
      tile_rows(ap, ns, n_res, w.ni_max, c, left_rows->at(s, s + ns));
    }
    float* const bp = w.b.data_as<float>();
    right_.forward(xs, w.b.slice(0, 0, ns), arena);
    mask_rows(bp, ns * n_res, c, weight, nullptr);
    tile_rows(bp, ns, n_res, w.nj_max, c, w.b_kept.slice(1, s, s + ns));
  }
  if (left_rows) left_rows->finish();
}

void OuterProductMean::keep_tiles(const Tiles& w, const Tensor& m, const Tensor& msa_mask,
                                  const KeptTiles& kept, Arena& arena) const {
  const std::int64_t n_res = w.n_res, c = c_;
  const float* const mk = w.mb.data_as<float>();
  float* const proj = w.rows.data_as<float>();
  SpillWindow rows(m, 0, w.rb_max, SpillWindow::Access::read, SpillWindow::kAlwaysStaged);
  // One window over both projections' tiles: one slab of runs staged, not one per projection.
  SpillWindow tiles_out(kept.ab, 1, w.rb_max, SpillWindow::Access::write);
  for (std::int64_t s = 0; s < w.n_seq; s += w.rb_max) {
    const std::int64_t ns = std::min(w.rb_max, w.n_seq - s);
    mask_block(w.mb, msa_mask, s, s + ns);
    const Tensor xs = w.x.slice(0, 0, ns);
    norm_.forward(rows.at(s, s + ns), xs);
    // Masked as project_columns masks a tile's, and rounded as it rounds them: the left
    // projection's tiles first, then the right one's.
    const Tensor step = tiles_out.at(s, s + ns);
    for (const std::int64_t side : {0, 1}) {
      (side == 0 ? left_ : right_).forward(xs, w.rows.slice(0, 0, ns), arena);
      mask_rows(
          proj, ns * n_res, c, [&](std::int64_t r) { return mk[r]; }, nullptr);
      tile_rows(proj, ns, n_res, w.tile, c, step.slice(0, side * w.tiles, (side + 1) * w.tiles));
    }
  }
  tiles_out.finish();
}

void OuterProductMean::project_columns(const Linear& side, const Tensor& cols, std::int64_t i0,
                                       std::int64_t ni, std::int64_t s0, std::int64_t sb,
                                       const ColumnProjection& dst, Arena& arena) const {
  const std::int64_t c = c_;
  float* const out = dst.out;
  for (std::int64_t x0 = 0; x0 < sb; x0 += dst.xb_max) {
    const std::int64_t xn = std::min(dst.xb_max, sb - x0);
    for (std::int64_t s = 0; s < xn; ++s) {
      float* const to = dst.xa.data_as<float>() + s * ni * c_m_;
      const std::int64_t at = (s0 + x0 + s) * cols.stride(0);
      if (cols.dtype() == DType::bf16) {
        detail::bf16_to_f32(static_cast<const bf16*>(cols.data()) + at, to, ni * c_m_);
      } else {
        std::memcpy(to, static_cast<const float*>(cols.data()) + at,
                    static_cast<std::size_t>(ni * c_m_) * sizeof(float));
      }
    }
    const Tensor xs = dst.xa.slice(0, 0, xn * ni);
    norm_.forward(xs, xs);
    side.forward(xs, Tensor(out + x0 * ni * c, DType::f32, Shape{xn * ni, c}), arena);
  }
  const float* const mk = dst.mb.data_as<float>();
  const std::int64_t n_res = dst.n_res;
  mask_rows(
      out, sb * ni, c, [&](std::int64_t t) { return mk[t / ni * n_res + i0 + t % ni]; }, dst.out16);
  // A short last block's rows spread to the full block's stride, the stride of a kept tile:
  // oneDNN may sum a product in another order for another leading dimension, and a spilled
  // plan's outer products must be the same bits as this one's.
  if (ni < dst.stride) {
    const auto spread = [&](auto* rows) {
      for (std::int64_t s = sb - 1; s > 0; --s) {
        std::memmove(rows + s * dst.stride * c, rows + s * ni * c,
                     static_cast<std::size_t>(ni * c) * sizeof(*rows));
      }
    };
    if (dst.out16 != nullptr) {
      spread(dst.out16);
    } else {
      spread(out);
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
  const KeptLeft kept = kept_left_buffers(w).allocate(apart);
  std::optional<GemmCache> own_gemm;
  GemmCache& gemm = given_or_own(ctx.gemm, own_gemm);
  mask_block(w.mb, msa_mask, 0, n_seq);
  right_rows(w, m, arena, w.left_apart ? kept.a : Tensor());
  // Unless the left projection is kept, the slabs read a few residues of every sequence.
  std::optional<StridedAccess> column_pass;
  std::optional<SpillWindow> columns;
  if (!w.left_apart) {
    column_pass.emplace(m);
    columns.emplace(m, 1, w.ni_max, SpillWindow::Access::read, SpillWindow::kAlwaysStaged);
  }
  SpillWindow z_rows(z, 0, w.ni_max, SpillWindow::Access::write);
  // The left projection's tiles in one pass, a tile per slab: the next ones are read while this
  // one computes (a window per tile would wait for each tile's read, 128 per block at chunk 2).
  std::optional<SpillWindow> left_tiles;
  if (w.left_apart && n_seq > 0) {
    left_tiles.emplace(kept.a, 0, 1, SpillWindow::Access::read, SpillWindow::kAlwaysStaged);
  }
  const ColumnProjection left{w.xa,
                              w.xb_max,
                              w.mb,
                              n_res,
                              w.left_apart ? nullptr : w.a.data_as<float>(),
                              w.left_apart ? nullptr : w.a16(),
                              w.ni_max};

  // For each slab of residues i the sums over all sequences against a block of residues j at a
  // time: square GEMMs, and the kept right projection read once per slab.
  const std::int64_t ld = w.nj_max * c;
  for (std::int64_t i0 = 0; i0 < n_res; i0 += w.ni_max) {
    const std::int64_t ni = std::min(w.ni_max, n_res - i0);
    OuterOperands x{nullptr, nullptr, w.ni_max * c, nullptr, nullptr, w.nj_max * c};
    if (n_seq > 0 && w.left_apart) {
      const std::int64_t tile = i0 / w.ni_max;
      const Tensor a = left_tiles->at(tile, tile + 1).select(0, 0);
      x.a = w.use_bf16 ? nullptr : a.data_as<float>();
      x.a16 = w.use_bf16 ? a.data_as<bf16>() : nullptr;
      x.lda = a.stride(0);
    } else if (n_seq > 0) {
      project_columns(left_, columns->at(i0, i0 + ni), i0, ni, 0, n_seq, left, arena);
      x.a = left.out;
      x.a16 = left.out16;
    }
    const Tensor z_slab = z_rows.at(i0, i0 + ni);
    for (std::int64_t j0 = 0; j0 < n_res; j0 += w.nj_max) {
      const std::int64_t nj = std::min(w.nj_max, n_res - j0);
      if (n_seq == 0) {
        std::memset(w.outer.data(), 0, static_cast<std::size_t>(ni * c * ld) * sizeof(float));
        std::memset(w.norm.data(), 0, static_cast<std::size_t>(ni * w.nj_max) * sizeof(float));
      } else {
        const Tensor b = w.b_kept.select(0, j0 / w.nj_max);
        x.b = w.use_bf16 ? nullptr : b.data_as<float>();
        x.b16 = w.use_bf16 ? b.data_as<bf16>() : nullptr;
        // outer[(i, c1), (j, c2)] = Σ_s a[s, i, c1]·b[s, j, c2]; norm likewise over the mask.
        outer_sums(gemm, x, w.mb.data_as<float>(), {i0, ni, j0, nj, n_res}, n_seq, c, 0.f,
                   w.outer.data_as<float>(), ld, w.norm.data_as<float>(), w.nj_max);
      }
      add_update({w.outer.data_as<float>(), ld, w.norm.data_as<float>(), w.nj_max}, w.p,
                 z_slab.slice(1, j0, j0 + nj), arena);
    }
  }
  z_rows.finish();
  if (left_tiles) left_tiles->finish();
  // Pages of the kept projection a pass did not stage (a layout SpillWindow leaves to the
  // mapping) go.
  if (w.left_apart) apart.evict(kept.a.data(), kept.a.nbytes());
}

void OuterProductMean::forward_in_tiles(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                                        const RunContext& ctx) const {
  const std::int64_t n_seq = m.dim(0), n_res = m.dim(1), c = c_;
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  Arena& apart = ctx.activation_arena();
  ArenaScope apart_scope(apart);
  Tiles w(*this, n_seq, n_res, ctx.chunk, ctx.activations != nullptr);
  tile_buffers(w).allocate_into(arena, w);
  const KeptTiles kept = kept_tile_buffers(w).allocate(apart);
  std::optional<GemmCache> own_gemm;
  GemmCache& gemm = given_or_own(ctx.gemm, own_gemm);
  if (w.apart) keep_tiles(w, m, msa_mask, kept, arena);
  const std::int64_t t = w.tile, ld = t * c;
  const auto bf16_of = [&](const Tensor& x) {
    return w.use_bf16 && !w.apart ? x.data_as<bf16>() : nullptr;
  };
  const ColumnProjection left{
      w.xa, w.xb_max, w.mb, n_res, w.apart ? nullptr : w.a.data_as<float>(), bf16_of(w.a_bf16), t};
  const ColumnProjection right{
      w.xa, w.xb_max, w.mb, n_res, w.apart ? nullptr : w.b.data_as<float>(), bf16_of(w.b_bf16), t};
  // Unless the projections are kept, each tile pair reads its residues of every sequence.
  std::optional<StridedAccess> column_pass;
  std::optional<SpillWindow> i_columns;
  if (!w.apart) {
    column_pass.emplace(m);
    i_columns.emplace(m, 1, t, SpillWindow::Access::read);
  }
  for (std::int64_t i0 = 0; i0 < n_res; i0 += t) {
    const std::int64_t ni = std::min(t, n_res - i0);
    // The tile pairs of tile i update z's block [i0, i0 + ni) x [j0, j0 + nj) in turn: a pass
    // over the columns of those rows, whose steps are as large as a slab's rows against all of
    // n_res (about chunk·n_res pairs).
    SpillWindow z_blocks(z.slice(0, i0, i0 + ni), 1, t, SpillWindow::Access::write, z.nbytes());
    const Tensor cols_i = i_columns ? i_columns->at(i0, i0 + ni) : Tensor();
    std::optional<SpillWindow> j_columns;
    if (!w.apart) j_columns.emplace(m, 1, t, SpillWindow::Access::read);
    for (std::int64_t j0 = 0; j0 < n_res; j0 += t) {
      const std::int64_t nj = std::min(t, n_res - j0);
      const Tensor cols_j = j_columns ? j_columns->at(j0, j0 + nj) : Tensor();
      std::optional<SpillWindow> kept_i, kept_j;
      if (w.apart) {
        kept_i.emplace(kept.ab.select(0, i0 / t), 0, w.sb_max, SpillWindow::Access::read,
                       kept.ab.nbytes());
        kept_j.emplace(kept.ab.select(0, w.tiles + j0 / t), 0, w.sb_max, SpillWindow::Access::read,
                       kept.ab.nbytes());
      }
      // outer[(i, c1), (j, c2)] (+)= Σ_s a[s, i, c1]·b[s, j, c2] a step of sequences at a time.
      for (std::int64_t s0 = 0; s0 < n_seq; s0 += w.sb_max) {
        const std::int64_t sb = std::min(w.sb_max, n_seq - s0);
        mask_block(w.mb, msa_mask, s0, s0 + sb);
        OuterOperands x{};
        if (w.apart) {
          const Tensor a = kept_i->at(s0, s0 + sb), b = kept_j->at(s0, s0 + sb);
          x = w.use_bf16 ? OuterOperands{nullptr, a.data_as<bf16>(), a.stride(0),
                                         nullptr, b.data_as<bf16>(), b.stride(0)}
                         : OuterOperands{a.data_as<float>(), nullptr, a.stride(0),
                                         b.data_as<float>(), nullptr, b.stride(0)};
        } else {
          project_columns(left_, cols_i, i0, ni, s0, sb, left, arena);
          project_columns(right_, cols_j, j0, nj, s0, sb, right, arena);
          x = {left.out, left.out16, ld, right.out, right.out16, ld};
        }
        outer_sums(gemm, x, w.mb.data_as<float>(), {i0, ni, j0, nj, n_res}, sb, c,
                   s0 == 0 ? 0.f : 1.f, w.outer.data_as<float>(), ld, w.norm.data_as<float>(), t);
      }
      if (kept_i) kept_i->finish();
      if (kept_j) kept_j->finish();
      add_update({w.outer.data_as<float>(), ld, w.norm.data_as<float>(), t}, w.p,
                 z_blocks.at(j0, j0 + nj), arena);
    }
    if (j_columns) j_columns->finish();
    z_blocks.finish();
  }
  // Kept projections the page cache held (not streamed) leave no pages behind.
  if (w.apart) {
    apart.evict(kept.ab.data(), kept.ab.nbytes());
  }
}

std::size_t OuterProductMean::apart_bytes(std::int64_t n_seq, std::int64_t n_res,
                                          std::int64_t chunk) const {
  if (chunk <= 0 || n_res == 0) return 0;
  if (keeps_right(n_seq, detail::chunk_rows(n_res, chunk))) {
    return kept_left_buffers(Slabs(*this, n_seq, n_res, chunk, true)).bytes();
  }
  return kept_tile_buffers(Tiles(*this, n_seq, n_res, chunk, true)).bytes();
}

std::size_t OuterProductMean::spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                  std::int64_t chunk, DType m_type,
                                                  std::size_t cache_bytes) const {
  const std::size_t msa = static_cast<std::size_t>(n_seq * n_res * c_m_) * dtype_size(m_type);
  const std::size_t m_bytes = msa;  // streamed whatever the cache room (kAlwaysStaged)
  if (chunk <= 0 || n_res == 0) return m_bytes;
  // Slabs: one pass over m makes the right projection, and the left projection's tiles written
  // beside it are read back once.
  if (keeps_right(n_seq, detail::chunk_rows(n_res, chunk))) {
    return m_bytes + 2 * kept_left_buffers(Slabs(*this, n_seq, n_res, chunk, true)).bytes();
  }
  // Tiles: one pass over m writes both projections' tiles; each tile is read back once per tile
  // of the other side (once when cached).
  const Tiles w(*this, n_seq, n_res, chunk, true);
  const std::size_t kept = kept_tile_buffers(w).bytes();
  return m_bytes +
         (kept <= cache_bytes ? 2 * kept : kept * (1 + static_cast<std::size_t>(w.tiles)));
}

std::size_t OuterProductMean::spill_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                 std::int64_t chunk, DType m_type) const {
  if (chunk <= 0 || n_res == 0) return 0;
  const std::size_t m_index = static_cast<std::size_t>(c_m_) * dtype_size(m_type);
  constexpr auto read = SpillWindow::Access::read;
  const auto m_rows = [&](std::int64_t step) {
    return SpillWindow::resident_bytes(1, n_seq, static_cast<std::size_t>(n_res) * m_index, step,
                                       read);
  };
  if (keeps_right(n_seq, detail::chunk_rows(n_res, chunk))) {
    // One pass over m, the left projection's tiles written beside it; then a pass reads them
    // back, a tile per slab.
    const Slabs w(*this, n_seq, n_res, chunk, true);
    const std::size_t tile_row = static_cast<std::size_t>(w.ni_max * c_) * dtype_size(w.b_type);
    return std::max(
        m_rows(w.rb_max) + SpillWindow::resident_bytes(w.tiles, n_seq, tile_row, w.rb_max),
        SpillWindow::resident_bytes(1, w.tiles, static_cast<std::size_t>(n_seq) * tile_row, 1,
                                    read));
  }
  // One pass over m, both projections' tiles written beside it (one window); then each tile
  // pair reads its two tiles back.
  const Tiles w(*this, n_seq, n_res, chunk, true);
  const std::size_t tile_row = static_cast<std::size_t>(w.tile * c_) * dtype_size(w.b_type);
  return std::max(
      m_rows(w.rb_max) + SpillWindow::resident_bytes(2 * w.tiles, n_seq, tile_row, w.rb_max),
      2 * SpillWindow::resident_bytes(1, n_seq, tile_row, w.sb_max, SpillWindow::Access::read));
}

std::size_t OuterProductMean::pair_window_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                std::int64_t chunk) const {
  const std::size_t pair_index = static_cast<std::size_t>(c_z_) * sizeof(float);
  const std::int64_t rows = detail::chunk_rows(n_res, chunk);
  if (chunk <= 0 || keeps_right(n_seq, rows)) {
    return SpillWindow::resident_bytes(
        1, n_res, static_cast<std::size_t>(n_res) * pair_index,
        chunk <= 0 ? rows : Slabs(*this, n_seq, n_res, chunk, false).ni_max);
  }
  const std::int64_t t = Tiles(*this, n_seq, n_res, chunk, false).tile;
  return SpillWindow::resident_bytes(std::min(t, n_res), n_res, pair_index, t);
}

std::size_t OuterProductMean::scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                            std::int64_t chunk, bool apart) const {
  if (n_res == 0) return 0;
  if (chunk <= 0) return whole_msa_scratch_bytes(n_seq, n_res, chunk);
  return keeps_right(n_seq, detail::chunk_rows(n_res, chunk))
             ? slabs_scratch_bytes(n_seq, n_res, chunk, apart)
             : tiles_scratch_bytes(n_seq, n_res, chunk, apart);
}

std::size_t OuterProductMean::slabs_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                  std::int64_t chunk, bool apart) const {
  const Slabs w(*this, n_seq, n_res, chunk, apart);
  const std::size_t update = largest_step(n_res, w.ni_max, [&](std::int64_t ni) {
    return largest_step(n_res, w.nj_max,
                        [&](std::int64_t nj) { return update_bytes(ni, kProjectRows, nj); });
  });
  return slab_buffers(w).bytes() + std::max(slab_projection_bytes(w), update);
}

std::size_t OuterProductMean::tiles_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                                  std::int64_t chunk, bool apart) const {
  const Tiles w(*this, n_seq, n_res, chunk, apart);
  const std::size_t update = largest_step(n_res, w.tile, [&](std::int64_t ni) {
    return largest_step(n_res, w.tile,
                        [&](std::int64_t nj) { return update_bytes(ni, kProjectRows, nj); });
  });
  return tile_buffers(w).bytes() + std::max(tile_projection_bytes(w), update);
}

std::size_t OuterProductMean::slab_projection_bytes(const Slabs& w) const {
  const EpilogueKind normed{.bf16_in = bf16_norm()};
  const EpilogueKind normed_to_bf16{.bf16_out = true, .bf16_in = bf16_norm()};
  const std::int64_t n_seq = w.n_seq, n_res = w.n_res, ni = w.ni_max;
  std::size_t bytes = 0;
  for (std::int64_t s : {w.rb_max, n_seq % w.rb_max}) {
    if (s == 0) continue;
    bytes = std::max(bytes, right_.scratch_bytes(s * n_res, normed));
    if (w.use_bf16) bytes = std::max(bytes, right_.scratch_bytes(s * n_res, normed_to_bf16));
    if (w.left_apart) bytes = std::max(bytes, left_.scratch_bytes(s * n_res, normed));
  }
  if (w.left_apart) return bytes;  // the left projection is made with the right one's blocks
  for (std::int64_t s : {w.xb_max, n_seq % w.xb_max}) {
    for (std::int64_t i : {ni, n_res % ni}) {
      if (s > 0 && i > 0) bytes = std::max(bytes, left_.scratch_bytes(s * i));
    }
  }
  return bytes;
}

std::size_t OuterProductMean::tile_projection_bytes(const Tiles& w) const {
  const std::int64_t n_seq = w.n_seq, n_res = w.n_res, t = w.tile, sb = w.sb_max;
  std::size_t bytes = 0;
  if (w.apart) {
    // keep_tiles: both sides project blocks of rows of LayerNorm(m).
    const EpilogueKind normed{.bf16_in = bf16_norm()};
    for (std::int64_t s : {w.rb_max, n_seq % w.rb_max}) {
      if (s == 0) continue;
      bytes = std::max(
          {bytes, left_.scratch_bytes(s * n_res, normed), right_.scratch_bytes(s * n_res, normed)});
    }
    return bytes;
  }
  // project_columns: blocks of xb_max sequences of a tile's residues, of each step.
  for (std::int64_t s : {w.xb_max, sb % w.xb_max, n_seq % sb % w.xb_max}) {
    for (std::int64_t i : {t, n_res % t}) {
      if (s > 0 && i > 0) {
        bytes = std::max({bytes, left_.scratch_bytes(s * i), right_.scratch_bytes(s * i)});
      }
    }
  }
  return bytes;
}

std::size_t OuterProductMean::update_bytes(std::int64_t ni, std::int64_t group,
                                           std::int64_t n_j) const {
  const EpilogueKind projected{.bf16_in = projected_type() == DType::bf16};
  return largest_step(ni, std::min(ni, group), [&](std::int64_t g) {
    return update_buffers(g, ni, n_j).bytes() + output_.scratch_bytes(g * n_j, projected);
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
