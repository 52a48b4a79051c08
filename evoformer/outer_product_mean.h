// Outer product mean (AF2 supplement Alg. 10): the MSA's per-residue projections multiplied
// pairwise and averaged over sequences become an update of the pair representation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 10
class OuterProductMean {
 public:
  // Added to the mask count before dividing (AF2 and OpenFold).
  static constexpr float kEpsilon = 1e-3f;

  // scope: `evoformer/evoformer_iteration/outer_product_mean` (or the extra-MSA stack's) with its
  // block index; holds layer_norm_input [c_m], left_projection / right_projection
  // [c_m, c_hidden] + bias, output_w [c_hidden, c_hidden, c_z] + output_b [c_z].
  OuterProductMean(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                   std::int64_t c_hidden);

  // m: [n_seq, n_res, c_m] (contiguous rows), read only.
  // msa_mask: [n_seq, n_res] f32 (any strides).
  // z: [n_res, n_res, c_z] (contiguous rows); updated in place:
  //   z[i, j] += (Linear_out(Σ_s a[s, i] ⊗ b[s, j]) ) / (Σ_s mask[s, i]·mask[s, j] + 1e-3)
  // with a = mask ⊙ left(LayerNorm(m)), b = mask ⊙ right(LayerNorm(m)); the output bias is added
  // before the division, as in AF2 and OpenFold.
  // Unchunked (ctx.chunk <= 0), the projections a, b ([n_seq, n_res, c_hidden] each) are built
  // for the whole MSA and the outer products of all pairs formed with one GEMM. With a chunk the
  // transients are O(chunk·n_res·c_hidden²) whatever n_seq is, in one of two ways:
  // - slabs: where the right projection of the whole MSA is small beside the slab
  //   (keeps_right), it is made once and kept in scratch, and the outer products formed for
  //   square blocks of residues i by residues j, no more room than ctx.chunk residues i against
  //   all j would take, a slab of residues i at a time: a power of two of about sqrt(chunk·n_res)
  //   residues a side, at most the chunk or a spill slab's rows of the pair, whichever is more
  //   (at N >= 512 or so the chunk, and then a slab's block is all j, as before): square GEMMs,
  //   and the kept right projection read once per slab. At N = 256, 512 rows and a
  //   chunk of 2 the module took 0.39-0.43 s per Evoformer block in DRAM, against 0.52-0.64 s for
  //   slabs of 2 residues against all 256 (64 x 8192 products, the right projection read from
  //   memory for every two residues). With ctx.activations set (a spilled plan) the left projection
  //   is made in the same pass over m and kept there in tiles of a slab's residues, so that no slab
  //   reads columns of m (a run of a few KiB per sequence, the slowest reads of a spill file) and m
  //   is read once.
  // - tiles: otherwise (a deep MSA at a fine chunk), the outer products are formed for square
  //   tiles of about sqrt(chunk·n_res) residues i by as many residues j, the sum over sequences a
  //   block at a time, and both projections of a tile pair made for each pair: 2·sqrt(n_res/chunk)
  //   times the projections' work instead of n_res/chunk. With ctx.activations set both
  //   projections are made in one pass over m and kept there in those tiles, then each tile pair
  //   reads its two tiles back: the spill tier moves 2·sqrt(n_res/chunk) times the projections'
  //   bytes (12 at N = 256 and a chunk of 8), not the n_res/chunk of a kept right projection read
  //   back per slab (33).
  // Where both a spilled and an unspilled path exist, every bit of z is the same.
  void forward(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena(); apart: with ctx.activations set.
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            bool apart = false) const;
  // Bytes forward() takes from ctx.activations when it is set: the left projection in a slab's
  // tiles, or (tiles) both projections in their tiles.
  std::size_t apart_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  // Bytes forward() moves in the spill tier with m (of m_type) and ctx.activations spilled: its
  // pass over m (streamed whatever the room to cache it: SpillWindow::kAlwaysStaged), then the
  // projections apart: written once and read once (slabs), or read once per tile of the other
  // side (tiles; once when a projection is at most cache_bytes: FileTier::set_cache_bytes).
  std::size_t spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  DType m_type, std::size_t cache_bytes) const;
  // The most forward()'s staged passes (memory/spill_window.h) hold at once with m spilled and
  // ctx.activations set: the pass that writes the projections' tiles beside its pass over m,
  // then the passes that read them back.
  std::size_t spill_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                 DType m_type) const;
  // The most forward()'s staged pass over a spilled z holds at once: a slab's rows, or the
  // blocks of a tile's rows that its tile pairs update in turn.
  std::size_t pair_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  // Unchunked: the whole MSA's projections held throughout, LayerNorm(m) while they are
  // computed, then a slab's outer products.
  struct Projections {
    Tensor mask;  // msa_mask made contiguous [n_seq, n_res]
    Tensor a;     // mask ⊙ left projection [n_seq, n_res, c]
    Tensor b;     // mask ⊙ right projection [n_seq, n_res, c]
    Tensor a16;   // bf16 outer products only: a and b rounded
    Tensor b16;
  };
  struct Normed {
    Tensor x;  // LayerNorm(m) [n_seq, n_res, c_m] of norm_type()
  };
  struct Products {
    Tensor outer;  // Σ_s a ⊗ b for ni residues i [ni·c, n_res·c]
    Tensor norm;   // Σ_s mask·mask [ni, n_res]
    Tensor p;      // the outer products reordered for the output projection [ni, n_res, c²]
  };
  // Chunked, where the right projection is kept in scratch (keeps_right): the sizes and
  // buffers of forward_in_slabs(), allocated once for every slab.
  struct Slabs {
    // The sizes for `op` over an MSA of n_seq x n_res with `chunk`; no buffers yet.
    // spilled: ctx.activations is set, where the left projection is kept.
    Slabs(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
          bool spilled);
    // bf16: a rounded (null in fp32).
    bf16* a16() const { return use_bf16 ? a_bf16.data_as<bf16>() : nullptr; }

    std::int64_t n_seq, n_res;
    std::int64_t ni_max;  // residues i per slab
    std::int64_t nj_max;  // residues j per block of a slab's outer products
    std::int64_t xb_max;  // sequences per LayerNorm block of the left projection
    std::int64_t rb_max;  // sequences per LayerNorm block of the right projection
    bool use_bf16;
    DType b_type;  // of the projections the outer products read
    // The left projection held in ctx.activations, tiled, so that no slab reads columns of m.
    bool left_apart;
    std::int64_t tiles;    // slabs of residues i
    std::int64_t j_tiles;  // blocks of residues j
    Tensor x;              // LayerNorm(m[s]) for the right projection
    Tensor b;              // one call's rows of the right projection [rb_max, n_res, c]
    // The masked right projection, of b_type, kept in blocks of residues j [j_tiles, n_seq,
    // nj_max, c]: each block's outer products read one dense matrix. oneDNN takes its brgemm
    // matmul only for dense operands; for a strided one it takes gemm:jit, which mallocs its
    // packing buffers on every call, each mapped and faulted in anew above the heap's mmap
    // threshold (memory/heap_policy.h): at N = 256 and chunk 16 (blocks of 32 residues j in
    // rows of all 256) the module took 0.42-0.46 s per Evoformer block in DRAM, 0.32-0.33 s
    // with dense blocks.
    Tensor b_kept;
    Tensor xa;      // m[s, slab] for the left projection (not left_apart)
    Tensor a;       // the left projection [n_seq, ni_max, c] (not left_apart)
    Tensor a_rows;  // left_apart: the left projection of right_rows' block [rb_max, n_res, c]
    Tensor mb;      // the mask [n_seq, n_res]
    Tensor outer;   // [ni_max·c, nj_max·c]
    Tensor norm;    // [ni_max, nj_max]
    Tensor p;       // the reordered outer products, add_update's room
    Tensor a_bf16;  // bf16 only: a rounded
  };
  // With Slabs::left_apart, in ctx.activations: the masked left projection, bf16 when the outer
  // products are; tile t holds the residues of slab t.
  struct KeptLeft {
    Tensor a;  // [tiles, n_seq, ni_max, c]
  };
  // Chunked otherwise: the sizes and buffers of forward_in_tiles(), allocated once.
  struct Tiles {
    // As Slabs'; spilled: both projections are made once and kept in ctx.activations.
    Tiles(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
          bool spilled);

    std::int64_t n_seq, n_res;
    std::int64_t tile;    // residues per tile, i and j alike
    std::int64_t tiles;   // per side
    std::int64_t sb_max;  // sequences summed per step
    std::int64_t xb_max;  // sequences per LayerNorm block of a tile's projection
    std::int64_t rb_max;  // sequences per block of the pass that keeps the projections
    bool use_bf16;
    DType b_type;   // of the projections the outer products read
    bool apart;     // both projections kept in ctx.activations
    Tensor mb;      // the step's mask rows [sb_max, n_res]
    Tensor x;       // apart: LayerNorm(m) of a block of rows [rb_max, n_res, c_m] of norm_type()
    Tensor rows;    // apart: one projection of those rows [rb_max, n_res, c]
    Tensor xa;      // not apart: m[s, tile] [xb_max·tile, c_m]
    Tensor a;       // not apart: the step's left projection of tile i [sb_max, tile, c]
    Tensor b;       // not apart: the step's right projection of tile j
    Tensor a_bf16;  // not apart, bf16: a and b rounded
    Tensor b_bf16;
    Tensor outer;  // [tile·c, tile·c]
    Tensor norm;   // [tile, tile]
    Tensor p;      // the reordered outer products, add_update's room
  };
  // With Tiles::apart, in ctx.activations: both masked projections, of Tiles::b_type, in one
  // tensor [2·tiles, n_seq, tile, c]: tile t of the left one at t, of the right one at
  // tiles + t, each holding residues [t·tile, (t + 1)·tile).
  struct KeptTiles {
    Tensor ab;
  };
  // add_update's output projection of g residues, where it cannot land in the outer buffer.
  struct Update {
    Tensor u;  // [g, n_j, c_z]
  };
  // Where add_update finds a block of outer products: rows (i, c1) of ld floats, columns
  // (j, c2) from 0; the mask counts' rows of ld_norm.
  struct OuterBlock {
    float* outer;
    std::int64_t ld;
    const float* norm;
    std::int64_t ld_norm;
  };
  // What a pass making one projection of a block of residues of some sequences needs: xa for
  // m's rows as f32 (xb_max sequences at a time), the mask rows mb of n_res (from the first
  // sequence), out [sb, stride, c] f32 and, for bf16 outer products, out16 the same rounded.
  struct ColumnProjection {
    const Tensor& xa;
    std::int64_t xb_max;
    const Tensor& mb;
    std::int64_t n_res;
    float* out;
    bf16* out16;
    std::int64_t stride;  // residues between sequences in out
  };
  BufferList<Projections> projection_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<Normed> normed_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<Products> product_buffers(std::int64_t ni, std::int64_t n_res) const;
  BufferList<Slabs> slab_buffers(const Slabs& w) const;
  BufferList<KeptLeft> kept_left_buffers(const Slabs& w) const;
  BufferList<Tiles> tile_buffers(const Tiles& w) const;
  BufferList<KeptTiles> kept_tile_buffers(const Tiles& w) const;
  // For g of a slab's ni residues by n_j: u unless g = ni and c_z <= c² (then it reuses outer).
  BufferList<Update> update_buffers(std::int64_t g, std::int64_t ni, std::int64_t n_j) const;

  // The right projection can be made once and kept in scratch for slabs of `slab_rows`
  // residues: it is at most twice the slab's MSA rows (n_seq·c <= 2·ni·c_m·c). Where it is not,
  // tiles recompute it at about 2·c_m/(sqrt(ni·n_res)·c) of the outer products' work.
  bool keeps_right(std::int64_t n_seq, std::int64_t slab_rows) const {
    return n_seq <= 2 * slab_rows * c_m_;
  }
  // forward() without chunking, Alg. 10 lines 1-2: `mask` = msa_mask made contiguous; a and b
  // [n_seq, n_res, c] = mask ⊙ left / right projections of LayerNorm(m).
  void project_masked(const Tensor& m, const Tensor& msa_mask, const Tensor& mask, const Tensor& a,
                      const Tensor& b, Arena& arena) const;
  // forward() with ctx.chunk > 0 where keeps_right: the right projection, each slab's left
  // projection, the outer sums and the update.
  void forward_in_slabs(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                        const RunContext& ctx) const;
  // forward() with ctx.chunk > 0 otherwise: each tile pair's projections (made or read back),
  // outer sums and update.
  void forward_in_tiles(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                        const RunContext& ctx) const;
  // Tiles::apart: one pass over m that keeps both masked projections in their tiles.
  void keep_tiles(const Tiles& w, const Tensor& m, const Tensor& msa_mask, const KeptTiles& kept,
                  Arena& arena) const;
  // The masked right projection into w.b_kept, its mask rows w.mb's. left_out (w.left_apart):
  // KeptLeft::a, where the masked left projection of the same rows goes.
  void right_rows(const Slabs& w, const Tensor& m, Arena& arena,
                  const Tensor& left_out = Tensor()) const;
  // The step's mask rows: mb = msa_mask[first, end).
  static void mask_block(const Tensor& mb, const Tensor& msa_mask, std::int64_t first,
                         std::int64_t end);
  // dst.out = mask ⊙ side(LayerNorm(m[s, i])) for the residues [i0, i0 + ni) (`cols`: m's
  // [n_seq, ni, c_m] columns from i0 on) of the sequences [s0, s0 + sb), the mask rows dst.mb's
  // from 0 (bf16: rounded into dst.out16).
  void project_columns(const Linear& side, const Tensor& cols, std::int64_t i0, std::int64_t ni,
                       std::int64_t s0, std::int64_t sb, const ColumnProjection& dst,
                       Arena& arena) const;
  // scratch_bytes() with a chunk: the Slabs' or Tiles' buffers and the largest of the
  // projections' and the update's scratch; without: the whole MSA's projections and a slab's
  // outer products.
  std::size_t slabs_scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  bool apart) const;
  std::size_t tiles_scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  bool apart) const;
  std::size_t slab_projection_bytes(const Slabs& w) const;
  std::size_t tile_projection_bytes(const Tiles& w) const;
  std::size_t whole_msa_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                      std::int64_t chunk) const;
  // add_update's scratch for a block of ni by n_j residues, p holding `group` rows of i at a
  // time.
  std::size_t update_bytes(std::int64_t ni, std::int64_t group, std::int64_t n_j) const;
  // The outer products run in bf16 when the projections compute in bf16 (the trunk's stacks).
  bool bf16_outer() const { return left_.compute() == DType::bf16; }
  // The projections read LayerNorm(m) as bf16 rows it rounded as it stored them: what the bf16
  // Linears would round it to anyway, without an fp32 copy and a conversion pass.
  bool bf16_norm() const {
    return bf16_outer() && right_.compute() == DType::bf16 && c_m_ <= LayerNorm::kMaxBf16Channels;
  }
  DType norm_type() const { return bf16_norm() ? DType::bf16 : DType::f32; }
  // The reordered outer products the output projection reads: bf16 rows where it computes in
  // bf16 (it would round fp32 rows itself, in a pass of its own).
  DType projected_type() const {
    return output_.compute() == DType::bf16 ? DType::bf16 : DType::f32;
  }
  // Alg. 10 lines 3-4 for a block of residues i by j: z_block[i, j] += Linear_out(outer[i, j]) /
  // (norm[i, j] + eps); z_block: [ni, nj, c_z] f32 (any strides but the last axis'), x.outer
  // overwritten; p: room for [g, nj, c²], the rows of residues i reordered and projected at a
  // time (g <= ni).
  void add_update(const OuterBlock& x, const Tensor& p, const Tensor& z_block, Arena& arena) const;

  std::int64_t c_m_, c_z_, c_;
  LayerNorm norm_;
  Linear left_;    // [c_m] -> [c]
  Linear right_;   // [c_m] -> [c]
  Linear output_;  // [c, c] -> [c_z]
};

}  // namespace cpufold
