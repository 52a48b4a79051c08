#include "evoformer/recycling_embedder.h"

#include <algorithm>
#include <string>

#include "ops/parallel_rows.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

void check_pseudo_beta_args(const Tensor& aatype, const Tensor& atoms, std::int64_t n_atoms,
                            const Tensor& dst, const char* what) {
  const std::int64_t n_res = aatype.numel();
  if (aatype.rank() != 1 || atoms.dtype() != DType::f32 ||
      !(atoms.shape() == Shape{n_res, n_atoms, 3}) || dst.dtype() != DType::f32 ||
      !(dst.shape() == Shape{n_res, 3})) {
    throw InternalError(std::string(what) + " given aatype " + aatype.describe() + ", atoms " +
                        atoms.describe() + ", dst " + dst.describe());
  }
}

std::int64_t restype_at(const Tensor& aatype, std::int64_t i) {
  return aatype.dtype() == DType::i64 ? aatype.at<std::int64_t>({i})
                                      : static_cast<std::int64_t>(aatype.at<std::int32_t>({i}));
}

}  // namespace

void pseudo_beta_from_atom37(const Tensor& aatype, const Tensor& atom37, const Tensor& dst) {
  check_pseudo_beta_args(aatype, atom37, 37, dst, "pseudo_beta_from_atom37");
  for (std::int64_t i = 0; i < aatype.numel(); ++i) {
    const std::int64_t atom = restype_at(aatype, i) == kGlycine ? kAtom37Ca : kAtom37Cb;
    for (std::int64_t x = 0; x < 3; ++x) dst.at<float>({i, x}) = atom37.at<float>({i, atom, x});
  }
}

void pseudo_beta_from_atom14(const Tensor& aatype, const Tensor& atom14, const Tensor& dst) {
  check_pseudo_beta_args(aatype, atom14, 14, dst, "pseudo_beta_from_atom14");
  for (std::int64_t i = 0; i < aatype.numel(); ++i) {
    const std::int64_t restype = restype_at(aatype, i);
    const bool known = restype >= 0 && restype < kUnknownRestype;
    const std::int64_t atom = restype == kGlycine ? kAtom14Ca : kAtom14Cb;
    for (std::int64_t x = 0; x < 3; ++x) {
      dst.at<float>({i, x}) = known ? atom14.at<float>({i, atom, x}) : 0.f;
    }
  }
}

RecyclingEmbedder::RecyclingEmbedder(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                                     std::int64_t n_bins, Bins bins)
    : c_m_(c_m),
      c_z_(c_z),
      msa_norm_((scope / "prev_msa_first_row_norm").layer_norm(c_m)),
      pair_norm_((scope / "prev_pair_norm").layer_norm(c_z)),
      bins_(bins.min_bin, bins.max_bin, n_bins, bins.inf) {
  const ParamScope s = scope / "prev_pos_linear";
  table_ = weight_floats(s.get("weights", {n_bins, c_z}), "prev_pos_linear weights");
  const std::vector<float> bias = weight_floats(s.get("bias", {c_z}), "prev_pos_linear bias");
  // One-hot · W + b is exactly W[k] + b; an all-zero one-hot (no bin) gives b.
  for (std::int64_t k = 0; k < n_bins; ++k) {
    for (std::int64_t c = 0; c < c_z; ++c) {
      table_[static_cast<std::size_t>(k * c_z + c)] += bias[static_cast<std::size_t>(c)];
    }
  }
  table_.insert(table_.end(), bias.begin(), bias.end());
}

BufferList<RecyclingEmbedder::Buffers> RecyclingEmbedder::buffers(std::int64_t n_res,
                                                                  std::int64_t c_m,
                                                                  std::int64_t c_z, bool accumulate,
                                                                  std::int64_t chunk) {
  const std::int64_t rows = chunk > 0 ? std::min(chunk, n_res) : n_res;
  return BufferList<Buffers>{{&Buffers::x, DType::f32, Shape{n_res, 3}}}
      .add_if(accumulate, {&Buffers::first_row, DType::f32, Shape{n_res, c_m}})
      .add_if(accumulate, {&Buffers::pair_rows, DType::f32, Shape{rows, n_res, c_z}});
}

std::size_t RecyclingEmbedder::scratch_bytes(std::int64_t n_res, std::int64_t c_m, std::int64_t c_z,
                                             bool accumulate, std::int64_t chunk) {
  return buffers(n_res, c_m, c_z, accumulate, chunk).bytes();
}

void RecyclingEmbedder::forward(const Tensor& prev_msa_first_row, const Tensor& prev_pair,
                                const Tensor& prev_pseudo_beta, const Tensor& msa_first_row,
                                const Tensor& pair, bool accumulate, const RunContext& ctx) const {
  const std::int64_t n_res = prev_pair.dim(0);
  expect_f32_shape(prev_msa_first_row, {n_res, c_m_}, "RecyclingEmbedder prev_msa_first_row");
  expect_f32_shape(prev_pair, {n_res, n_res, c_z_}, "RecyclingEmbedder prev_pair");
  expect_f32_shape(prev_pseudo_beta, {n_res, 3}, "RecyclingEmbedder prev_pseudo_beta");
  expect_f32_shape(msa_first_row, {n_res, c_m_}, "RecyclingEmbedder msa_first_row");
  expect_f32_shape(pair, {n_res, n_res, c_z_}, "RecyclingEmbedder pair");
  if (accumulate &&
      (pair.data() == prev_pair.data() || msa_first_row.data() == prev_msa_first_row.data())) {
    throw InternalError("RecyclingEmbedder: accumulating into the previous representation");
  }

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  const Buffers b = buffers(n_res, c_m_, c_z_, accumulate, ctx.chunk).allocate(arena);
  // Positions as a contiguous copy: the pair loop reads them n_res times.
  for (std::int64_t i = 0; i < n_res; ++i) {
    for (std::int64_t k = 0; k < 3; ++k) {
      b.x.at<float>({i, k}) = prev_pseudo_beta.at<float>({i, k});
    }
  }

  embed_first_row(prev_msa_first_row, msa_first_row, b.first_row);
  embed_pair(prev_pair, b.x.data_as<float>(), pair, b.pair_rows);
  if (!accumulate) {
    ctx.trace("recycling_embedder", "out_0", msa_first_row);
    ctx.trace("recycling_embedder", "out_1", pair);
  }
}

void RecyclingEmbedder::embed_first_row(const Tensor& prev, const Tensor& first_row,
                                        const Tensor& update) const {
  const std::int64_t n_res = prev.dim(0);
  if (!update.empty()) {
    msa_norm_.forward(prev, update);
    const RowView vd = row_view(first_row, "RecyclingEmbedder msa_first_row");
    const float* u = update.data_as<float>();
    for (std::int64_t i = 0; i < n_res; ++i) {
      for (std::int64_t c = 0; c < c_m_; ++c) vd.row(i)[c] += u[i * c_m_ + c];
    }
  } else {
    msa_norm_.forward(prev, first_row);
  }
}

void RecyclingEmbedder::embed_pair(const Tensor& prev_pair, const float* x, const Tensor& pair,
                                   const Tensor& rows) const {
  const std::int64_t n_res = prev_pair.dim(0);
  // Pair: rows [i0, i1) at a time.
  const std::int64_t c_z = c_z_;
  const bool accumulate = !rows.empty();
  const std::int64_t block = accumulate ? rows.dim(0) : n_res;
  const RowView vp = row_view(pair, "RecyclingEmbedder pair");
  const int no_bin = static_cast<int>(bins_.size());
  for (std::int64_t i0 = 0; i0 < n_res; i0 += block) {
    const std::int64_t i1 = std::min(n_res, i0 + block);
    const Tensor src = prev_pair.slice(0, i0, i1);
    // Normalised rows: in the destination itself, or in scratch when accumulating.
    const Tensor normed = accumulate ? rows.slice(0, 0, i1 - i0) : pair.slice(0, i0, i1);
    pair_norm_.forward(src, normed);
    const RowView vn = row_view(normed, "RecyclingEmbedder normalised pair");
    detail::for_each_row(i1 - i0, n_res * c_z, [&](std::int64_t r) {
      const std::int64_t i = i0 + r;
      const float* xi = x + i * 3;
      for (std::int64_t j = 0; j < n_res; ++j) {
        const float* xj = x + j * 3;
        const float d0 = xi[0] - xj[0], d1 = xi[1] - xj[1], d2 = xi[2] - xj[2];
        const float dist2 = d0 * d0 + d1 * d1 + d2 * d2;
        const int b = bins_.bin(dist2);
        const float* w = table_.data() + static_cast<std::size_t>((b < 0 ? no_bin : b) * c_z);
        const float* n = vn.row(r * n_res + j);
        float* dst = vp.row(i * n_res + j);
        if (accumulate) {
          for (std::int64_t c = 0; c < c_z; ++c) dst[c] += w[c] + n[c];
        } else {
          for (std::int64_t c = 0; c < c_z; ++c) dst[c] = w[c] + n[c];
        }
      }
    });
  }
}

}  // namespace cpufold
