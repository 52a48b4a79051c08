#include "evoformer/triangle_multiplication.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "memory/strided_access.h"
#include "ops/concat_linear.h"
#include "ops/gemm.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

// Pairs per projection / output block: the block buffers hold kRowBlock·(2·c_hidden + 3·c_z)
// floats (1.25 MiB at AF2's widths) whatever n_res and the chunk are.
constexpr std::int64_t kRowBlock = 512;
// Rows per transposition tile inside a block.
constexpr std::int64_t kTileRows = 64;
// Channels per transposition step: one 64-byte line of a row.
constexpr std::int64_t kChannelBlock = 16;
// Pair-matrix rows per slab: the chunk clamped to [kMinSlabRows, kMaxSlabRows], raised to
// n_res / kEdgePerSlab (at most kMaxLargeSlabRows) at large n_res. Each slab's products read
// every n_res² channel of the right edge, which outgrows the caches beyond some hundreds of
// residues: then a product of r rows does r/2 FLOP per byte it reads, and more rows are what
// keeps it compute-bound. One core's 2500 x 2500 channel products, measured with two cores
// busy (AVX-512 EPYC): 96-129 GFLOP/s at 32 rows, 128-158 at 64, 148-174 at 128, 166-187 at
// 256. The slab then costs at most 1/kEdgePerSlab of the edge. At small n_res the channel
// stays in cache and larger slabs make the products no faster (measured at N = 256), while
// smaller ones, at 2× the time at 4 rows, would save under 16/n_res of the edge's bytes.
constexpr std::int64_t kMinSlabRows = 16;
constexpr std::int64_t kMaxSlabRows = 64;
constexpr std::int64_t kEdgePerSlab = 16;
constexpr std::int64_t kMaxLargeSlabRows = 256;

// [proj | gate] of one edge side (AF2's `left` or `right`): c_z -> 2·c_hidden, one GEMM.
Linear make_edge_projection(const ParamScope& scope, std::int64_t c_z, std::int64_t c,
                            const std::string& side) {
  std::vector<Tensor> w, bias;
  for (const std::string& name : {side + "_projection", side + "_gate"}) {
    w.push_back((scope / name).get("weights", {c_z, c}));
    bias.push_back((scope / name).get("bias", {c}));
  }
  return concat_linear(w, bias, scope.linear_source());
}

// Elements between channels of a channel-major edge of `pairs` pairs: rounded up to a cache
// line plus one line, so the kChannelBlock streams of a transposition step do not share a
// cache set (with a stride of n_res² alone they would whenever n_res² is a multiple of 1024).
std::int64_t channel_stride(std::int64_t pairs) {
  return (pairs + 15) / 16 * 16 + 16;
}

std::int64_t slab_rows(std::int64_t n, std::int64_t chunk) {
  const std::int64_t want =
      chunk > 0 ? std::clamp(chunk, kMinSlabRows, kMaxSlabRows) : kMaxSlabRows;
  const std::int64_t large = std::min(kMaxLargeSlabRows, n / kEdgePerSlab);
  return std::max<std::int64_t>(1, std::min(std::max(want, large), n));
}

}  // namespace

TriangleMultiplication::TriangleMultiplication(const ParamScope& scope, std::int64_t c_z,
                                               std::int64_t c_hidden, Direction direction)
    : c_z_(c_z),
      c_(c_hidden),
      direction_(direction),
      layer_norm_input_((scope / "layer_norm_input").layer_norm(c_z)),
      whole_projection_(make_edge_projection(scope, c_z, c_hidden, "right")),
      slab_projection_(make_edge_projection(scope, c_z, c_hidden, "left")),
      gating_linear_((scope / "gating_linear").linear({c_z, c_z})),
      center_layer_norm_((scope / "center_layer_norm").layer_norm(c_hidden)),
      output_projection_((scope / "output_projection").linear({c_hidden, c_z})) {}

TriangleMultiplication::Edge TriangleMultiplication::Edge::of(const Tensor& edge) {
  Edge e;
  e.stride = edge.dim(1);
  if (edge.dtype() == DType::bf16) {
    e.b16 = edge.data_as<bf16>();
  } else {
    e.f32 = edge.data_as<float>();
  }
  return e;
}

BufferList<TriangleMultiplication::WholeEdge> TriangleMultiplication::whole_edge_buffers(
    std::int64_t n) const {
  return {{&WholeEdge::edge, whole_projection_.compute(), Shape{c_, channel_stride(n * n)}}};
}

// bf16 compute: the edges are stored in bf16 (half the c·n² right edge) and multiplied by
// oneDNN's bf16 matmul with fp32 accumulation into the slab's products; fp32 computes each
// channel's product in its thread's buffer and copies it over the channel's left edge.
BufferList<TriangleMultiplication::SlabBuffers> TriangleMultiplication::slab_buffers(
    std::int64_t n, std::int64_t rows) const {
  const bool use_bf16 = whole_projection_.compute() == DType::bf16;
  const std::int64_t ss = channel_stride(rows * n), block = std::min(kRowBlock, n * n);
  return BufferList<SlabBuffers>{
      {&SlabBuffers::edge, use_bf16 ? DType::bf16 : DType::f32, Shape{c_, ss}},
      {&SlabBuffers::x, DType::f32, Shape{block, c_z_}},
      {&SlabBuffers::proj, DType::f32, Shape{block, 2 * c_}},
      {&SlabBuffers::gate, DType::f32, Shape{block, c_z_}},
      {&SlabBuffers::zc, DType::f32, Shape{block, c_z_}}}
      .add_if(use_bf16, {&SlabBuffers::slab_products, DType::f32, Shape{c_, ss}})
      .add_if(!use_bf16,
              {&SlabBuffers::thread_products, DType::f32, Shape{omp_get_max_threads(), ss}});
}

struct TriangleMultiplication::Workspace {
  std::int64_t n = 0, n2 = 0;  // residues, pairs (rows of z)
  std::int64_t cs = 0;         // elements between channels of `whole`
  std::int64_t rows = 0;       // pair-matrix rows (outgoing) or columns (incoming) per slab
  std::int64_t ss = 0;         // elements between channels of `slab` (and of a product)
  Tensor z_rows;               // z as [n², c_z]
  RowView mask;                // pair_mask
  // The right edge over all pairs, channel-major (a plain n x n matrix per channel, cs apart):
  // the module's irreducible c·n² values.
  Edge whole;
  // The left edge of one slab, channel-major (ss apart).
  Edge slab;
  // The products of a slab, channel-major like it: fp32 computes them in a per-thread buffer
  // and copies each over its channel of the (f32) left edge, bf16 writes them here directly.
  float* slab_products = nullptr;
  float* products = nullptr;  // fp32: one slab-sized product per thread
  GemmCache* gemm = nullptr;  // the products' primitives
  // Block buffers: LayerNorm(z) rows, [proj | gate] rows (whose first c columns later hold
  // LayerNorm(p) rows), the output gate, and z rows gathered from a column slab.
  Tensor x, proj, gate, zc;
};

// Pairs of one slab, in the order its products come out of the GEMMs: outgoing, rows i0..i1 of
// the pair matrix (contiguous rows of z); incoming, columns j0..j1 one after the other, pair
// (k, j) at (j - j0)·n + k (rows of z n apart).
struct TriangleMultiplication::Slab {
  std::int64_t first = 0, rows = 0;
  bool columns = false;

  std::int64_t pairs(std::int64_t n) const { return rows * n; }
  std::int64_t z_row(std::int64_t q, std::int64_t n) const {
    return columns ? q % n * n + first + q / n : first * n + q;
  }
};

void TriangleMultiplication::forward(const Tensor& z, const Tensor& pair_mask,
                                     const RunContext& ctx) const {
  const std::int64_t n = z.rank() == 3 ? z.dim(0) : -1;
  if (n < 0 || !(z.shape() == Shape{n, n, c_z_}) || !(pair_mask.shape() == Shape{n, n})) {
    throw InternalError("TriangleMultiplication: z " + z.describe() + " and pair_mask " +
                        pair_mask.describe() + " must be [n_res, n_res, " + std::to_string(c_z_) +
                        "] and [n_res, n_res]");
  }
  if (n == 0) return;
  const RowView zr = row_view(z, "TriangleMultiplication z");
  Workspace w;
  std::optional<GemmCache> own_gemm;
  w.gemm = &given_or_own(ctx.gemm, own_gemm);
  w.mask = row_view(pair_mask, "TriangleMultiplication pair_mask");
  w.z_rows = Tensor(zr.data, DType::f32, Shape{zr.rows, c_z_}, Shape{zr.ld, 1});

  // A spilled plan keeps the c·n² right edge with the activations it spills.
  Arena& edge_arena = ctx.activation_arena();
  ArenaScope edge_scope(edge_arena);
  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  w.n = n;
  w.n2 = n * n;
  w.rows = slab_rows(n, ctx.chunk);
  w.whole = Edge::of(whole_edge_buffers(n).allocate(edge_arena).edge);
  const SlabBuffers b = slab_buffers(n, w.rows).allocate(arena);
  w.slab = Edge::of(b.edge);
  w.cs = w.whole.stride;
  w.ss = w.slab.stride;
  w.slab_products = b.slab_products.empty() ? w.slab.f32 : b.slab_products.data_as<float>();
  w.products = b.thread_products.empty() ? nullptr : b.thread_products.data_as<float>();
  w.x = b.x;
  w.proj = b.proj;
  w.gate = b.gate;
  w.zc = b.zc;

  // The whole right edge is projected before z changes. Each slab then reads and updates only
  // its own pairs of z: rows of the pair matrix for outgoing edges (the left edge of row i is
  // z[i, :]), columns for incoming ones (the left edge of column j is z[:, j]).
  project_edge(whole_projection_, Slab{0, n, false}, w.whole, w, arena);
  const bool outgoing = direction_ == Direction::outgoing;
  std::optional<StridedAccess> column_pass;  // incoming slabs read a few columns of every row
  if (!outgoing) column_pass.emplace(z);
  for (std::int64_t first = 0; first < n; first += w.rows) {
    const Slab slab{first, std::min(w.rows, n - first), !outgoing};
    project_edge(slab_projection_, slab, w.slab, w, arena);
    triangle_products(slab, w);
    gated_output(slab, w, arena);
  }
}

Tensor TriangleMultiplication::load_pairs(const Slab& slab, std::int64_t q0, std::int64_t nr,
                                          const Workspace& w) const {
  if (!slab.columns) return w.z_rows.slice(0, slab.z_row(q0, w.n), slab.z_row(q0, w.n) + nr);
  const RowView zr = row_view(w.z_rows, "TriangleMultiplication z");
  float* const dst = w.zc.data_as<float>();
  for (std::int64_t q = 0; q < nr; ++q) {
    std::memcpy(dst + q * c_z_, zr.row(slab.z_row(q0 + q, w.n)),
                static_cast<std::size_t>(c_z_) * sizeof(float));
  }
  return w.zc.slice(0, 0, nr);
}

void TriangleMultiplication::project_edge(const Linear& projection, const Slab& slab,
                                          const Edge& edge, const Workspace& w,
                                          Arena& arena) const {
  // AF2 Alg. 11/12 lines 1-2: edge = sigmoid(x·W_g + b_g) ⊙ (x·W_p + b_p) ⊙ mask, x =
  // LayerNorm(z), block by block, transposed into channel-major.
  const std::int64_t c = c_, n = w.n, block = w.x.dim(0), pairs = slab.pairs(n);
  const std::int64_t stride = edge.stride;
  const auto& kern = detail::row_kernels();
  const RowView& mr = w.mask;
  float* const t = w.proj.data_as<float>();
  for (std::int64_t q0 = 0; q0 < pairs; q0 += block) {
    const std::int64_t nr = std::min(block, pairs - q0);
    const Tensor xb = w.x.slice(0, 0, nr);
    layer_norm_input_.forward(load_pairs(slab, q0, nr, w), xb);
    projection.forward(xb, w.proj.slice(0, 0, nr), arena);
    const std::int64_t n_tiles = (nr + kTileRows - 1) / kTileRows;
#pragma omp parallel for schedule(static)
    for (std::int64_t tile = 0; tile < n_tiles; ++tile) {
      const std::int64_t i0 = tile * kTileRows, i1 = std::min(nr, i0 + kTileRows);
      for (std::int64_t i = i0; i < i1; ++i) {
        float* row = t + i * 2 * c;
        kern.sigmoid(row + c, c);
        kern.mul(row, row + c, c);
        const std::int64_t r = slab.z_row(q0 + i, n);
        const float m = mr.data[r / n * mr.ld + r % n];
        if (m != 1.f) {
          for (std::int64_t ch = 0; ch < c; ++ch) row[ch] *= m;
        }
      }
      for (std::int64_t ch0 = 0; ch0 < c; ch0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, c - ch0);
        const std::int64_t at = ch0 * stride + q0 + i0;
        const float* src = t + i0 * 2 * c + ch0;
        if (edge.b16 != nullptr) {
          kern.transpose_to_bf16(src, 2 * c, i1 - i0, nc, edge.b16 + at, stride);
        } else {
          kern.transpose(src, 2 * c, i1 - i0, nc, edge.f32 + at, stride);
        }
      }
    }
  }
}

void TriangleMultiplication::triangle_products(const Slab& slab, const Workspace& w) const {
  // Line 4 for the slab's pairs, one single-threaded GEMM per channel, channels spread over the
  // threads, so a product does not depend on the thread count or the slab size. On cached
  // matmul primitives, not dnnl_sgemm, which mallocs its packing buffers on every call (1.6
  // MiB at 1,000 residues, mapped and unmapped each time) and ran the outgoing (B transposed)
  // products of 2,500 residues at 50-126 against 120-188 GFLOP/s (32-256 rows). Outgoing:
  // p[i, j] = Σ_k left[i, k]·right[j, k] for the slab's rows i; incoming: p[i, j] =
  // Σ_k left[k, j]·right[k, i] for its columns j, formed as pᵀ so that both are one
  // [r, n] x [n, n] product. Each lands in its thread's buffer and then replaces the channel's
  // left edge.
  const std::int64_t c = c_, n = w.n, r = slab.rows, ss = w.ss, cs = w.cs;
  const int n_threads = omp_get_max_threads();
  std::atomic<bool> failed = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
  for (std::int64_t ch = 0; ch < c; ++ch) {
    if (w.slab.b16 != nullptr) {
      const bool ok =
          detail::gemm_bf16(*w.gemm, false, !slab.columns, r, n, n, 1.f, w.slab.b16 + ch * ss, n,
                            w.whole.b16 + ch * cs, n, 0.f, w.slab_products + ch * ss, n);
      if (!ok) failed.store(true, std::memory_order_relaxed);
      continue;
    }
    float* p = w.products + omp_get_thread_num() * ss;
    float* left = w.slab.f32 + ch * ss;
    const float* right = w.whole.f32 + ch * cs;
    const bool ok =
        detail::gemm_f32(*w.gemm, false, !slab.columns, r, n, n, 1.f, left, n, right, n, 0.f, p, n);
    if (!ok) {
      failed.store(true, std::memory_order_relaxed);
      continue;
    }
    std::memcpy(left, p, static_cast<std::size_t>(r * n) * sizeof(float));
  }
  if (failed) {
    w.gemm->throw_if_out_of_memory();
    throw InternalError("TriangleMultiplication: oneDNN rejected an " + std::to_string(n) + " x " +
                        std::to_string(n) + " x " + std::to_string(r) + " product");
  }
}

void TriangleMultiplication::gated_output(const Slab& slab, const Workspace& w,
                                          Arena& arena) const {
  // Lines 3 and 5: z += sigmoid(LayerNorm(z)·W_g + b_g) ⊙ (LayerNorm(p)·W_o + b_o), block by
  // block. A block of z is read (for the gate) before it is written, and no later slab reads it.
  const std::int64_t c = c_, n = w.n, block = w.x.dim(0), pairs = slab.pairs(n), ss = w.ss;
  const auto& kern = detail::row_kernels();
  float* const t = w.proj.data_as<float>();
  for (std::int64_t q0 = 0; q0 < pairs; q0 += block) {
    const std::int64_t nr = std::min(block, pairs - q0);
    const Tensor zb = load_pairs(slab, q0, nr, w), xb = w.x.slice(0, 0, nr);
    const Tensor gb = w.gate.slice(0, 0, nr);
    layer_norm_input_.forward(zb, xb);
    LinearEpilogue sigmoid;
    sigmoid.activation = Activation::sigmoid;
    gating_linear_.forward(xb, gb, arena, sigmoid);

    const Tensor p(t, DType::f32, Shape{nr, c});
    const std::int64_t n_tiles = (nr + kTileRows - 1) / kTileRows;
#pragma omp parallel for schedule(static)
    for (std::int64_t tile = 0; tile < n_tiles; ++tile) {
      const std::int64_t i0 = tile * kTileRows, i1 = std::min(nr, i0 + kTileRows);
      for (std::int64_t ch0 = 0; ch0 < c; ch0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, c - ch0);
        kern.transpose(w.slab_products + ch0 * ss + q0 + i0, ss, nc, i1 - i0, t + i0 * c + ch0, c);
      }
    }
    center_layer_norm_.forward(p, p);
    LinearEpilogue residual;
    residual.multiply = gb;
    residual.accumulate = true;
    output_projection_.forward(p, zb, arena, residual);
    if (slab.columns) store_pairs(slab, q0, zb, w);
  }
}

void TriangleMultiplication::store_pairs(const Slab& slab, std::int64_t q0, const Tensor& pairs,
                                         const Workspace& w) const {
  const RowView zr = row_view(w.z_rows, "TriangleMultiplication z");
  const float* src = pairs.data_as<float>();
  for (std::int64_t q = 0; q < pairs.dim(0); ++q) {
    std::memcpy(zr.row(slab.z_row(q0 + q, w.n)), src + q * c_z_,
                static_cast<std::size_t>(c_z_) * sizeof(float));
  }
}

std::size_t TriangleMultiplication::edge_bytes(std::int64_t n_res) const {
  return whole_edge_buffers(n_res).bytes();
}

std::size_t TriangleMultiplication::scratch_bytes(std::int64_t n_res, std::int64_t chunk,
                                                  bool edge_apart) const {
  const std::int64_t n2 = n_res * n_res;
  if (n2 == 0) return 0;
  const std::int64_t block = std::min(kRowBlock, n2), rows = slab_rows(n_res, chunk);
  const std::size_t fixed =
      (edge_apart ? 0 : edge_bytes(n_res)) + slab_buffers(n_res, rows).bytes();
  // Linear scratch depends on the row count: every block size the passes take (a full block
  // and the tails of the whole pair matrix, of a full slab and of the last, shorter slab).
  const EpilogueKind sigmoid{.activation = Activation::sigmoid};
  const EpilogueKind residual{.gated = true, .accumulate = true};
  std::size_t inner = 0;
  for (const std::int64_t r :
       {block, n2 % block, rows * n_res % block, n_res % rows * n_res % block,
        std::min(block, n_res % rows * n_res)}) {
    if (r == 0) continue;
    inner = std::max(inner, whole_projection_.scratch_bytes(r));
    inner = std::max(inner, slab_projection_.scratch_bytes(r));
    inner = std::max(inner, gating_linear_.scratch_bytes(r, sigmoid));
    inner = std::max(inner, output_projection_.scratch_bytes(r, residual));
  }
  return fixed + inner;
}

}  // namespace cpufold
