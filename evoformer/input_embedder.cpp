#include "evoformer/input_embedder.h"

#include <algorithm>
#include <string>

#include "evoformer/embedder_support.h"
#include "ops/parallel_rows.h"
#include "ops/row_view.h"

namespace cpufold {

InputEmbedder::InputEmbedder(const ParamScope& scope, std::int64_t tf_dim, std::int64_t msa_dim,
                             std::int64_t c_m, std::int64_t c_z, std::int64_t max_relative)
    : tf_dim_(tf_dim),
      msa_dim_(msa_dim),
      c_m_(c_m),
      c_z_(c_z),
      preprocess_1d_((scope / "preprocess_1d").linear({tf_dim, c_m})),
      preprocess_msa_((scope / "preprocess_msa").linear({msa_dim, c_m})),
      left_single_((scope / "left_single").linear({tf_dim, c_z})),
      right_single_((scope / "right_single").linear({tf_dim, c_z})),
      relpos_(scope, max_relative, c_z) {}

BufferList<InputEmbedder::MsaBuffers> InputEmbedder::msa_buffers(std::int64_t n_res,
                                                                 std::int64_t c_m) {
  return {{&MsaBuffers::target, DType::f32, Shape{n_res, c_m}}};
}

BufferList<InputEmbedder::PairBuffers> InputEmbedder::pair_buffers(std::int64_t n_res,
                                                                   std::int64_t c_z,
                                                                   bool copy_index) {
  return BufferList<PairBuffers>{{&PairBuffers::left, DType::f32, Shape{n_res, c_z}},
                                 {&PairBuffers::right, DType::f32, Shape{n_res, c_z}}}
      .add_if(copy_index, {&PairBuffers::residue_index, DType::i64, Shape{n_res}});
}

std::size_t InputEmbedder::msa_scratch_bytes(std::int64_t n_res, std::int64_t c_m) {
  return msa_buffers(n_res, c_m).bytes();
}

std::size_t InputEmbedder::pair_scratch_bytes(std::int64_t n_res, std::int64_t c_z) {
  return pair_buffers(n_res, c_z, /*copy_index=*/true).bytes();
}

std::size_t InputEmbedder::scratch_bytes(std::int64_t n_seq, std::int64_t n_res) const {
  const std::size_t msa =
      msa_scratch_bytes(n_res, c_m_) +
      std::max(preprocess_1d_.scratch_bytes(n_res), preprocess_msa_.scratch_bytes(n_seq * n_res));
  const std::size_t pair =
      pair_scratch_bytes(n_res, c_z_) +
      std::max(left_single_.scratch_bytes(n_res), right_single_.scratch_bytes(n_res));
  return std::max(msa, pair);
}

void InputEmbedder::embed_msa(const Tensor& target_feat, const Tensor& msa_feat, const Tensor& m,
                              const RunContext& ctx) const {
  const std::int64_t n_res = target_feat.dim(0);
  const std::int64_t n_seq = msa_feat.dim(0);
  expect_f32_shape(target_feat, {n_res, tf_dim_}, "InputEmbedder target_feat");
  expect_f32_shape(msa_feat, {n_seq, n_res, msa_dim_}, "InputEmbedder msa_feat");
  expect_f32_shape(m, {n_seq, n_res, c_m_}, "InputEmbedder m");

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  // [n_res, c_m]: the target embedding every MSA row receives.
  const Tensor tf_m = msa_buffers(n_res, c_m_).allocate(arena).target;
  preprocess_1d_.forward(target_feat, tf_m, arena);
  // m = preprocess_msa(msa_feat), then m += tf_m row by row: no MSA-sized temporary.
  preprocess_msa_.forward(msa_feat, m, arena);
  const RowView vm = row_view(m, "InputEmbedder m");
  const float* t = tf_m.data_as<float>();
  const std::int64_t c_m = c_m_;
  detail::for_each_row(vm.rows, c_m, [&](std::int64_t r) {
    float* dst = vm.row(r);
    const float* src = t + (r % n_res) * c_m;
    for (std::int64_t c = 0; c < c_m; ++c) dst[c] += src[c];
  });
}

void InputEmbedder::embed_pair(const Tensor& target_feat, const Tensor& residue_index,
                               const Tensor& z, bool accumulate, const RunContext& ctx) const {
  const std::int64_t n_res = target_feat.dim(0);
  expect_f32_shape(target_feat, {n_res, tf_dim_}, "InputEmbedder target_feat");
  expect_f32_shape(z, {n_res, n_res, c_z_}, "InputEmbedder z");
  if (residue_index.rank() != 1 || residue_index.dim(0) != n_res) {
    throw InternalError("InputEmbedder residue_index is " + residue_index.describe() +
                        "; expected [" + std::to_string(n_res) + "]");
  }

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  const PairBuffers w = pair_buffers(n_res, c_z_, needs_index_copy(residue_index)).allocate(arena);
  const Tensor ri_t = contiguous_indices(residue_index, w.residue_index, "residue_index");
  left_single_.forward(target_feat, w.left, arena);
  right_single_.forward(target_feat, w.right, arena);

  const std::int64_t* ri = ri_t.data_as<std::int64_t>();
  const float* a = w.left.data_as<float>();
  const float* b = w.right.data_as<float>();
  const RowView vz = row_view(z, "InputEmbedder z");
  const std::int64_t c_z = c_z_;
  // OpenFold's order: (relpos + left_i) + right_j.
  detail::for_each_row(n_res, n_res * c_z, [&](std::int64_t i) {
    const float* ai = a + i * c_z;
    for (std::int64_t j = 0; j < n_res; ++j) {
      const float* w = relpos_.row(ri[i] - ri[j]);
      const float* bj = b + j * c_z;
      float* dst = vz.row(i * n_res + j);
      if (accumulate) {
        for (std::int64_t c = 0; c < c_z; ++c) dst[c] += (w[c] + ai[c]) + bj[c];
      } else {
        for (std::int64_t c = 0; c < c_z; ++c) dst[c] = (w[c] + ai[c]) + bj[c];
      }
    }
  });
}

void InputEmbedder::forward(const Tensor& target_feat, const Tensor& residue_index,
                            const Tensor& msa_feat, const Tensor& m, const Tensor& z,
                            const RunContext& ctx) const {
  embed_msa(target_feat, msa_feat, m, ctx);
  embed_pair(target_feat, residue_index, z, /*accumulate=*/false, ctx);
  ctx.trace("input_embedder", "out_0", m);
  ctx.trace("input_embedder", "out_1", z);
}

}  // namespace cpufold
