#include "evoformer/transition.h"

#include <algorithm>
#include <string>

#include "memory/spill_window.h"
#include "ops/row_chunks.h"
#include "ops/row_view.h"

namespace cpufold {

Transition::Transition(const ParamScope& scope, std::int64_t c, std::int64_t factor)
    : c_(c),
      factor_(factor),
      norm_((scope / "input_layer_norm").layer_norm(c)),
      transition1_((scope / "transition1").linear({c, factor * c})),
      transition2_((scope / "transition2").linear({factor * c, c})) {}

namespace {

// Whether every entry of the mask slice `m` (f32, any strides) is 1.
bool all_ones(const Tensor& m) {
  const float* mp = static_cast<const float*>(m.data());
  std::int64_t idx[Shape::kMaxRank] = {};
  for (std::int64_t n = 0; n < m.numel(); ++n) {
    std::int64_t off = 0;
    for (int a = 0; a < m.rank(); ++a) off += idx[a] * m.stride(a);
    if (mp[off] != 1.f) return false;
    for (int a = m.rank() - 1; a >= 0; --a) {
      if (++idx[a] < m.dim(a)) break;
      idx[a] = 0;
    }
  }
  return true;
}

// x += update ⊙ mask, row by row: x and update [rows, c] (row views), mask x's shape without
// the channel axis.
void add_masked(const Tensor& x, const Tensor& update, const Tensor& mask, std::int64_t rows,
                std::int64_t c) {
  const RowView vx = row_view(x, "Transition x"), vu = row_view(update, "Transition update");
  const float* mp = static_cast<const float*>(mask.data());
  const int mrank = mask.rank();
#pragma omp parallel for schedule(static) if (rows * c >= (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t rem = r, off = 0;
    for (int a = mrank - 1; a >= 0; --a) {
      off += rem % mask.dim(a) * mask.stride(a);
      rem /= mask.dim(a);
    }
    const float w = mp[off];
    float* dst = vx.row(r);
    const float* src = vu.row(r);
    for (std::int64_t k = 0; k < c; ++k) dst[k] += src[k] * w;
  }
}

}  // namespace

void Transition::check_inputs(const Tensor& x, const Tensor& mask) const {
  if (x.rank() < 2 || x.dim(-1) != c_) {
    throw InternalError("Transition over " + std::to_string(c_) + " channels given " +
                        x.describe());
  }
  const bool masked = !mask.empty();
  if (masked) {
    bool ok = mask.dtype() == DType::f32 && mask.rank() == x.rank() - 1;
    for (int a = 0; ok && a < mask.rank(); ++a) ok = mask.dim(a) == x.dim(a);
    if (!ok) {
      throw InternalError("Transition mask " + mask.describe() + " does not match " + x.describe());
    }
  }
  if (x.dtype() == DType::bf16 && (masked || transition2_.compute() != DType::bf16)) {
    throw InternalError("Transition: a bf16 input " + x.describe() +
                        " takes bf16 compute and no mask");
  }
}

void Transition::forward(const Tensor& x, const Tensor& mask, const RunContext& ctx) const {
  check_inputs(x, mask);
  const bool masked = !mask.empty();
  const std::int64_t n_first = x.dim(0);
  if (x.numel() == 0) return;
  const std::int64_t per_first = x.numel() / (n_first * c_);
  Arena& arena = ctx.arena();
  const std::int64_t step = detail::chunk_rows(n_first, ctx.chunk);
  const bool narrow = narrow_hidden(masked);
  SpillWindow window(x, 0, step, SpillWindow::Access::write);
  for (std::int64_t a0 = 0; a0 < n_first; a0 += step) {
    const std::int64_t na = std::min(step, n_first - a0);
    ArenaScope scope(arena);
    const Tensor xs = window.at(a0, a0 + na);
    if (narrow) {
      forward_narrow(xs, na * per_first, arena);
    } else {
      forward_f32(xs, masked ? mask.slice(0, a0, a0 + na) : Tensor(), na * per_first, arena);
    }
  }
  window.finish();
}

void Transition::forward_narrow(const Tensor& xs, std::int64_t rows, Arena& arena) const {
  // bf16 compute: the LayerNorm and the hidden layer are stored in bf16 as they are written,
  // and each Linear reads its input in place.
  const Buffers b = buffers(rows, /*narrow=*/true).allocate(arena);
  norm_.forward(xs, b.xn);
  LinearEpilogue relu;
  relu.activation = Activation::relu;
  transition1_.forward(b.xn, b.h, arena, relu);
  LinearEpilogue accumulate;
  accumulate.accumulate = true;
  transition2_.forward(b.h, xs, arena, accumulate);
}

void Transition::forward_f32(const Tensor& xs, const Tensor& ms, std::int64_t rows,
                             Arena& arena) const {
  const Buffers b = buffers(rows, /*narrow=*/false).allocate(arena);
  norm_.forward(xs, b.xn);
  LinearEpilogue relu;
  relu.activation = Activation::relu;
  transition1_.forward(b.xn, b.h, arena, relu);
  // The update goes straight into x unless a mask entry of this chunk differs from 1.
  if (ms.empty() || all_ones(ms)) {
    LinearEpilogue accumulate;
    accumulate.accumulate = true;
    transition2_.forward(b.h, xs, arena, accumulate);
    return;
  }
  // Masked chunk: x += update ⊙ mask. xn is free again and has the right shape.
  transition2_.forward(b.h, b.xn, arena);
  add_masked(xs, b.xn, ms, rows, c_);
}

bool Transition::narrow_hidden(bool masked) const {
  return !masked && transition1_.compute() == DType::bf16 &&
         transition2_.compute() == DType::bf16 && c_ <= LayerNorm::kMaxBf16Channels;
}

BufferList<Transition::Buffers> Transition::buffers(std::int64_t rows, bool narrow) const {
  const DType type = narrow ? DType::bf16 : DType::f32;
  return {{&Buffers::xn, type, Shape{rows, c_}}, {&Buffers::h, type, Shape{rows, hidden()}}};
}

std::size_t Transition::scratch_bytes(std::int64_t n_first, std::int64_t n_rest, std::int64_t chunk,
                                      bool masked, DType x_type) const {
  const bool narrow = narrow_hidden(masked);
  const EpilogueKind relu{.activation = Activation::relu, .bf16_out = narrow, .bf16_in = narrow};
  const EpilogueKind accumulate{
      .accumulate = true, .bf16_out = x_type == DType::bf16, .bf16_in = narrow};
  return largest_step(n_first, detail::chunk_rows(n_first, chunk), [&](std::int64_t na) {
    const std::int64_t rows = na * n_rest;
    std::size_t inner = std::max(transition1_.scratch_bytes(rows, relu),
                                 transition2_.scratch_bytes(rows, accumulate));
    if (masked) inner = std::max(inner, transition2_.scratch_bytes(rows));
    return buffers(rows, narrow).bytes() + inner;
  });
}

}  // namespace cpufold
