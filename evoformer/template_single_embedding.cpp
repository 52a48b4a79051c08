#include "evoformer/template_single_embedding.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "evoformer/embedder_support.h"
#include "evoformer/template_pair_features.h"

namespace cpufold {
namespace {

constexpr std::int64_t kTorsions = 7;
// Channels: aatype one-hot, sin/cos, alternative sin/cos, mask.
constexpr std::int64_t kSingleFeatures = kTemplateAatypeClasses + 2 * kTorsions * 2 + kTorsions;
constexpr std::int64_t kMaskedTorsion = 2;  // AF2 masks the template MSA row with torsion 2

}  // namespace

TemplateSingleEmbedding::TemplateSingleEmbedding(const ParamScope& scope, std::int64_t c_in,
                                                 std::int64_t c_m)
    : c_in_(c_in),
      c_m_(c_m),
      embedding_((scope / "template_single_embedding").linear({c_in, c_m})),
      projection_((scope / "template_projection").linear({c_m, c_m})) {
  if (c_in != kSingleFeatures) {
    throw WeightsError("template_single_embedding has " + std::to_string(c_in) +
                       " input channels; AF2's template angle features have " +
                       std::to_string(kSingleFeatures));
  }
}

BufferList<TemplateSingleEmbedding::Buffers> TemplateSingleEmbedding::buffers(
    std::int64_t n_templ, std::int64_t n_res, bool copy_aatype) const {
  return BufferList<Buffers>{{&Buffers::feat, DType::f32, Shape{n_templ, n_res, c_in_}},
                             {&Buffers::hidden, DType::f32, Shape{n_templ, n_res, c_m_}}}
      .add_if(copy_aatype, {&Buffers::aatype, DType::i64, Shape{n_templ, n_res}});
}

std::size_t TemplateSingleEmbedding::scratch_bytes(std::int64_t n_templ, std::int64_t n_res) const {
  const std::int64_t rows = n_templ * n_res;
  const EpilogueKind relu{.activation = Activation::relu};
  return buffers(n_templ, n_res, /*copy_aatype=*/true).bytes() +
         std::max(embedding_.scratch_bytes(rows, relu), projection_.scratch_bytes(rows));
}

void TemplateSingleEmbedding::forward(const TrunkInputs& in, const Tensor& m,
                                      const Tensor& msa_mask, const RunContext& ctx) const {
  const std::int64_t n_templ = in.n_templ();
  if (n_templ == 0) return;
  const std::int64_t n_res = in.template_aatype.dim(1);
  expect_f32_shape(in.template_torsion_angles_sin_cos, {n_templ, n_res, kTorsions, 2},
                   "template_torsion_angles_sin_cos");
  expect_f32_shape(in.template_alt_torsion_angles_sin_cos, {n_templ, n_res, kTorsions, 2},
                   "template_alt_torsion_angles_sin_cos");
  expect_f32_shape(in.template_torsion_angles_mask, {n_templ, n_res, kTorsions},
                   "template_torsion_angles_mask");
  expect_f32_shape(m, {n_templ, n_res, c_m_}, "TemplateSingleEmbedding output");
  if (!msa_mask.empty()) expect_f32_shape(msa_mask, {n_templ, n_res}, "template MSA mask");

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  const Buffers b = buffers(n_templ, n_res, needs_index_copy(in.template_aatype)).allocate(arena);
  const Tensor aatype_t = contiguous_indices(in.template_aatype, b.aatype, "template_aatype");
  check_index_range(aatype_t, kTemplateAatypeClasses, "template_aatype");
  const auto* aatype = aatype_t.data_as<std::int64_t>();

  const Tensor& feat = b.feat;
  std::memset(feat.data(), 0, feat.nbytes());
  const Tensor& sin_cos = in.template_torsion_angles_sin_cos;
  const Tensor& alt = in.template_alt_torsion_angles_sin_cos;
  const Tensor& mask = in.template_torsion_angles_mask;
  for (std::int64_t t = 0; t < n_templ; ++t) {
    for (std::int64_t i = 0; i < n_res; ++i) {
      float* f = &feat.at<float>({t, i, 0});
      f[aatype[t * n_res + i]] = 1.f;
      float* f_sc = f + kTemplateAatypeClasses;
      float* f_alt = f_sc + 2 * kTorsions;
      float* f_mask = f_alt + 2 * kTorsions;
      for (std::int64_t a = 0; a < kTorsions; ++a) {
        for (std::int64_t s = 0; s < 2; ++s) {
          f_sc[2 * a + s] = sin_cos.at<float>({t, i, a, s});
          f_alt[2 * a + s] = alt.at<float>({t, i, a, s});
        }
        f_mask[a] = mask.at<float>({t, i, a});
      }
      if (!msa_mask.empty()) msa_mask.at<float>({t, i}) = mask.at<float>({t, i, kMaskedTorsion});
    }
  }

  LinearEpilogue relu;
  relu.activation = Activation::relu;
  embedding_.forward(feat, b.hidden, arena, relu);
  projection_.forward(b.hidden, m, arena);
}

}  // namespace cpufold
