#include "evoformer/triangle_multiplication.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "ops/concat_linear.h"
#include "ops/gemm.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

// Pairs (rows of z) per projection / output block: the block buffers hold
// kRowBlock·(4·c_hidden + 2·c_z) floats (1.5 MiB at AF2's widths) whatever n_res is.
constexpr std::int64_t kRowBlock = 512;
// Rows per transposition tile inside a block.
constexpr std::int64_t kTileRows = 64;
// Channels per transposition step: one 64-byte line of a row.
constexpr std::int64_t kChannelBlock = 16;

Linear make_projections(const ParamScope& scope, std::int64_t c_z, std::int64_t c,
                        TriangleMultiplication::Direction direction) {
  const bool outgoing = direction == TriangleMultiplication::Direction::outgoing;
  const std::string a = outgoing ? "left" : "right";
  const std::string b = outgoing ? "right" : "left";
  std::vector<Tensor> w, bias;
  for (const std::string& name : {a + "_projection", b + "_projection", a + "_gate", b + "_gate"}) {
    w.push_back((scope / name).get("weights", {c_z, c}));
    bias.push_back((scope / name).get("bias", {c}));
  }
  return concat_linear(w, bias);
}

std::int64_t block_rows(std::int64_t n2) {
  return std::min(kRowBlock, n2);
}

// Elements between channels of the channel-major a and b: n_res² rounded up to a cache line
// plus one line, so the kChannelBlock streams of a transposition step do not share a cache set
// (with a stride of n_res² alone they would whenever n_res² is a multiple of 1024).
std::int64_t channel_stride(std::int64_t n2) {
  return (n2 + 15) / 16 * 16 + 16;
}

}  // namespace

TriangleMultiplication::TriangleMultiplication(const ParamScope& scope, std::int64_t c_z,
                                               std::int64_t c_hidden, Direction direction)
    : c_z_(c_z),
      c_(c_hidden),
      direction_(direction),
      layer_norm_input_((scope / "layer_norm_input").layer_norm(c_z)),
      projections_(make_projections(scope, c_z, c_hidden, direction)),
      gating_linear_((scope / "gating_linear").linear({c_z, c_z})),
      center_layer_norm_((scope / "center_layer_norm").layer_norm(c_hidden)),
      output_projection_((scope / "output_projection").linear({c_hidden, c_z})) {}

struct TriangleMultiplication::Workspace {
  std::int64_t n = 0, n2 = 0;  // residues, pairs (rows of z)
  std::int64_t rows = 0;       // pairs per block
  std::int64_t cs = 0;         // elements between channels of a and b
  RowView mask;                // pair_mask
  // a and b channel-major (channels 0..c-1 a, c..2c-1 b, cs apart), so each channel is a
  // plain n_res x n_res matrix for the triangle product. They are the module's memory:
  // 2·c·n_res² floats. A chunked variant would keep only a slab of a (rows i0..i1 for outgoing
  // edges, columns i0..i1 for incoming ones) next to all of b, and produce p[i0:i1, :, :] per
  // slab.
  float* a = nullptr;
  float* b = nullptr;
  // Block buffers: LayerNorm(z) rows, then [a_proj | b_proj | a_gate | b_gate] rows (whose
  // first c columns later hold LayerNorm(p) rows), and the output gate.
  Tensor x, proj, gate;
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
  w.mask = row_view(pair_mask, "TriangleMultiplication pair_mask");
  const Tensor z_rows(zr.data, DType::f32, Shape{zr.rows, c_z_}, Shape{zr.ld, 1});

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  w.n = n;
  w.n2 = n * n;
  w.rows = block_rows(w.n2);
  w.cs = channel_stride(w.n2);
  w.a = arena.allocate(DType::f32, Shape{2 * c_, w.cs}).data_as<float>();
  w.b = w.a + c_ * w.cs;
  w.x = arena.allocate(DType::f32, Shape{w.rows, c_z_});
  w.proj = arena.allocate(DType::f32, Shape{w.rows, 4 * c_});
  w.gate = arena.allocate(DType::f32, Shape{w.rows, c_z_});

  project_edges(z_rows, w, arena);
  triangle_products(w, arena);
  gated_output(z_rows, w, arena);
}

void TriangleMultiplication::project_edges(const Tensor& z_rows, const Workspace& w,
                                           Arena& arena) const {
  const std::int64_t c = c_, n = w.n, n2 = w.n2, rows = w.rows, cs = w.cs;
  const auto& kern = detail::row_kernels();
  const RowView& mr = w.mask;
  float* const t = w.proj.data_as<float>();
  // a = sigmoid(a_gate) ⊙ a_proj ⊙ mask, b likewise, transposed into channel-major.
  for (std::int64_t r0 = 0; r0 < n2; r0 += rows) {
    const std::int64_t nr = std::min(rows, n2 - r0);
    const Tensor xb = w.x.slice(0, 0, nr);
    layer_norm_input_.forward(z_rows.slice(0, r0, r0 + nr), xb);
    projections_.forward(xb, w.proj.slice(0, 0, nr), arena);
    const std::int64_t n_tiles = (nr + kTileRows - 1) / kTileRows;
#pragma omp parallel for schedule(static)
    for (std::int64_t tile = 0; tile < n_tiles; ++tile) {
      const std::int64_t i0 = tile * kTileRows, i1 = std::min(nr, i0 + kTileRows);
      for (std::int64_t i = i0; i < i1; ++i) {
        float* row = t + i * 4 * c;
        kern.sigmoid(row + 2 * c, 2 * c);
        kern.mul(row, row + 2 * c, 2 * c);
        const std::int64_t r = r0 + i;
        const float m = mr.data[r / n * mr.ld + r % n];
        if (m != 1.f) {
          for (std::int64_t ch = 0; ch < 2 * c; ++ch) row[ch] *= m;
        }
      }
      for (std::int64_t ch0 = 0; ch0 < 2 * c; ch0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, 2 * c - ch0);
        float* dst = w.a + ch0 * cs + r0;
        for (std::int64_t i = i0; i < i1; ++i) {
          const float* src = t + i * 4 * c + ch0;
          for (std::int64_t k = 0; k < nc; ++k) dst[k * cs + i] = src[k];
        }
      }
    }
  }
}

void TriangleMultiplication::triangle_products(const Workspace& w, Arena& arena) const {
  const std::int64_t c = c_, n = w.n, n2 = w.n2, cs = w.cs;
  // p[:, :, ch] = a_ch · b_chᵀ (outgoing) or a_chᵀ · b_ch (incoming): one single-threaded GEMM
  // per channel, channels spread over the threads, so a product does not depend on the thread
  // count. Each product lands in its thread's buffer and then replaces a_ch.
  ArenaScope product_scope(arena);
  const int n_threads = omp_get_max_threads();
  float* const products = arena.allocate(DType::f32, Shape{n_threads, n, n}).data_as<float>();
  const bool outgoing = direction_ == Direction::outgoing;
  std::atomic<bool> failed = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
  for (std::int64_t ch = 0; ch < c; ++ch) {
    float* p = products + omp_get_thread_num() * n2;
    float* a = w.a + ch * cs;
    const float* b = w.b + ch * cs;
    if (!detail::sgemm(!outgoing, outgoing, n, n, n, 1.f, a, n, b, n, 0.f, p, n)) {
      failed.store(true, std::memory_order_relaxed);
      continue;
    }
    std::memcpy(a, p, static_cast<std::size_t>(n2) * sizeof(float));
  }
  if (failed) {
    throw InternalError("TriangleMultiplication: oneDNN sgemm rejected an " + std::to_string(n) +
                        " x " + std::to_string(n) + " product");
  }
}

void TriangleMultiplication::gated_output(const Tensor& z_rows, const Workspace& w,
                                          Arena& arena) const {
  const std::int64_t c = c_, n2 = w.n2, rows = w.rows, cs = w.cs;
  float* const t = w.proj.data_as<float>();
  // A block of z is read (for the gate) before it is written, and no other block reads it.
  for (std::int64_t r0 = 0; r0 < n2; r0 += rows) {
    const std::int64_t nr = std::min(rows, n2 - r0);
    const Tensor zb = z_rows.slice(0, r0, r0 + nr), xb = w.x.slice(0, 0, nr);
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
        const float* src = w.a + ch0 * cs + r0;
        for (std::int64_t i = i0; i < i1; ++i) {
          float* dst = t + i * c + ch0;
          for (std::int64_t k = 0; k < nc; ++k) dst[k] = src[k * cs + i];
        }
      }
    }
    center_layer_norm_.forward(p, p);
    LinearEpilogue residual;
    residual.multiply = gb;
    residual.accumulate = true;
    output_projection_.forward(p, zb, arena, residual);
  }
}

std::size_t TriangleMultiplication::scratch_bytes(std::int64_t n_res) const {
  const std::int64_t n2 = n_res * n_res;
  if (n2 == 0) return 0;
  const std::int64_t rows = block_rows(n2);
  const std::size_t fixed = f32_bytes(2 * c_ * channel_stride(n2)) + f32_bytes(rows * c_z_) +
                            f32_bytes(rows * 4 * c_) + f32_bytes(rows * c_z_);
  // Linear scratch depends on the row count: the full block and the last, shorter one.
  const EpilogueKind sigmoid{.activation = Activation::sigmoid};
  const EpilogueKind residual{.gated = true, .accumulate = true};
  std::size_t inner = f32_bytes(omp_get_max_threads() * n2);
  for (const std::int64_t r : {rows, n2 % rows}) {
    if (r == 0) continue;
    inner = std::max(inner, projections_.scratch_bytes(r));
    inner = std::max(inner, gating_linear_.scratch_bytes(r, sigmoid));
    inner = std::max(inner, output_projection_.scratch_bytes(r, residual));
  }
  return fixed + inner;
}

}  // namespace cpufold
