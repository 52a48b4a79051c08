#include "evoformer/template_pair_features.h"

#include <cstring>
#include <string>

#include "ops/parallel_rows.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

constexpr std::int64_t kAtom37N = 0, kAtom37Ca = 1, kAtom37C = 2;

// Channel offsets after the distogram.
struct Channels {
  std::int64_t pb_mask, aatype_j, aatype_i, unit_vector, backbone_mask, total;
  explicit Channels(std::int64_t n_bins)
      : pb_mask(n_bins),
        aatype_j(n_bins + 1),
        aatype_i(n_bins + 1 + kTemplateAatypeClasses),
        unit_vector(n_bins + 1 + 2 * kTemplateAatypeClasses),
        backbone_mask(unit_vector + 3),
        total(backbone_mask + 1) {}
};

float squared_distance(const float* a, const float* b) {
  const float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}

}  // namespace

BufferList<TemplateResidues> template_residue_buffers(std::int64_t n_res, bool copy_aatype) {
  return BufferList<TemplateResidues>{{&TemplateResidues::aatype, DType::i64, Shape{n_res}},
                                      {&TemplateResidues::pseudo_beta, DType::f32, Shape{n_res, 3}},
                                      {&TemplateResidues::pb_mask, DType::f32, Shape{n_res}},
                                      {&TemplateResidues::backbone_mask, DType::f32, Shape{n_res}}}
      .add_if(copy_aatype, {&TemplateResidues::aatype_copy, DType::i64, Shape{n_res}});
}

TemplateResidues template_residues(const TrunkInputs& in, std::int64_t t, Arena& arena) {
  const std::int64_t n_templ = in.n_templ();
  const std::int64_t n_res = in.template_aatype.dim(1);
  if (t < 0 || t >= n_templ) {
    throw InternalError("template " + std::to_string(t) + " of " + std::to_string(n_templ));
  }
  expect_f32_shape(in.template_pseudo_beta, {n_templ, n_res, 3}, "template_pseudo_beta");
  expect_f32_shape(in.template_pseudo_beta_mask, {n_templ, n_res}, "template_pseudo_beta_mask");
  expect_f32_shape(in.template_all_atom_mask, {n_templ, n_res, 37}, "template_all_atom_mask");

  const Tensor aatype_t = in.template_aatype.select(0, t);
  const TemplateResidues r =
      template_residue_buffers(n_res, needs_index_copy(aatype_t)).allocate(arena);
  const Tensor aatype = contiguous_indices(aatype_t, r.aatype_copy, "template_aatype");
  std::memcpy(r.aatype.data(), aatype.data(), r.aatype.nbytes());
  check_index_range(r.aatype, kTemplateAatypeClasses, "template_aatype");
  for (std::int64_t i = 0; i < n_res; ++i) {
    for (std::int64_t x = 0; x < 3; ++x) {
      r.pseudo_beta.at<float>({i, x}) = in.template_pseudo_beta.at<float>({t, i, x});
    }
    r.pb_mask.at<float>({i}) = in.template_pseudo_beta_mask.at<float>({t, i});
    const Tensor& m = in.template_all_atom_mask;
    r.backbone_mask.at<float>({i}) = m.at<float>({t, i, kAtom37N}) *
                                     m.at<float>({t, i, kAtom37Ca}) * m.at<float>({t, i, kAtom37C});
  }
  return r;
}

void build_template_pair_features(const TemplateResidues& res, const DistanceBins& bins,
                                  std::int64_t row_begin, const Tensor& dst) {
  const std::int64_t n_res = res.aatype.numel();
  const Channels ch(bins.size());
  const std::int64_t rows = dst.dim(0);
  expect_f32_shape(dst, {rows, n_res, ch.total}, "template pair features");
  if (row_begin < 0 || row_begin + rows > n_res) {
    throw InternalError("template pair feature rows out of range");
  }
  const auto* aa = res.aatype.data_as<std::int64_t>();
  const float* x = res.pseudo_beta.data_as<float>();
  const float* pb = res.pb_mask.data_as<float>();
  const float* bb = res.backbone_mask.data_as<float>();
  const RowView v = row_view(dst, "template pair features");
  detail::for_each_row(rows, n_res * ch.total, [&](std::int64_t r) {
    const std::int64_t i = row_begin + r;
    for (std::int64_t j = 0; j < n_res; ++j) {
      float* f = v.row(r * n_res + j);
      std::memset(f, 0, static_cast<std::size_t>(ch.total) * sizeof(float));
      const float bb2 = bb[i] * bb[j];
      const int bin = bins.bin(squared_distance(x + 3 * i, x + 3 * j));
      if (bin >= 0) f[bin] = bb2;
      f[ch.pb_mask] = (pb[i] * pb[j]) * bb2;
      f[ch.aatype_j + aa[j]] = bb2;
      f[ch.aatype_i + aa[i]] = bb2;
      f[ch.backbone_mask] = bb2 * bb2;
    }
  });
}

TemplatePairEmbedder::TemplatePairEmbedder(const ParamScope& scope, std::int64_t c_in,
                                           std::int64_t c_t, TemplateDistogram distogram)
    : c_in_(c_in),
      c_t_(c_t),
      bins_(distogram.min_bin, distogram.max_bin, c_in - kTemplatePairNonDistogramChannels,
            distogram.inf) {
  const ParamScope s = scope / "embedding2d";
  w_ = weight_floats(s.get("weights", {c_in, c_t}), "embedding2d weights");
  bias_ = weight_floats(s.get("bias", {c_t}), "embedding2d bias");
}

std::size_t TemplatePairEmbedder::scratch_bytes(std::int64_t n_res) {
  return template_residue_buffers(n_res, /*copy_aatype=*/true).bytes();
}

void TemplatePairEmbedder::forward(const TrunkInputs& in, std::int64_t t, const Tensor& dst,
                                   const RunContext& ctx) const {
  ArenaScope scope(ctx.arena());
  const TemplateResidues res = template_residues(in, t, ctx.arena());
  const std::int64_t n_res = res.aatype.numel();
  expect_f32_shape(dst, {n_res, n_res, c_t_}, "TemplatePairEmbedder output");

  const Channels ch(bins_.size());
  const auto* aa = res.aatype.data_as<std::int64_t>();
  const float* x = res.pseudo_beta.data_as<float>();
  const float* pb = res.pb_mask.data_as<float>();
  const float* bb = res.backbone_mask.data_as<float>();
  const float* w = w_.data();
  const float* b = bias_.data();
  const std::int64_t c_t = c_t_;
  const float* w_pb = w + ch.pb_mask * c_t;
  const float* w_bb = w + ch.backbone_mask * c_t;
  const RowView v = row_view(dst, "TemplatePairEmbedder output");
  detail::for_each_row(n_res, n_res * c_t, [&](std::int64_t i) {
    const float* w_i = w + (ch.aatype_i + aa[i]) * c_t;
    for (std::int64_t j = 0; j < n_res; ++j) {
      float* out = v.row(i * n_res + j);
      const float bb2 = bb[i] * bb[j];
      if (bb2 == 0.f) {
        for (std::int64_t c = 0; c < c_t; ++c) out[c] = b[c];
        continue;
      }
      const float pb2 = (pb[i] * pb[j]) * bb2;
      const float bb_ch = bb2 * bb2;
      const float* w_j = w + (ch.aatype_j + aa[j]) * c_t;
      const int bin = bins_.bin(squared_distance(x + 3 * i, x + 3 * j));
      if (bin >= 0) {
        const float* w_bin = w + bin * c_t;
        for (std::int64_t c = 0; c < c_t; ++c) {
          out[c] =
              (bb2 * w_bin[c] + pb2 * w_pb[c] + bb2 * w_j[c] + bb2 * w_i[c] + bb_ch * w_bb[c]) +
              b[c];
        }
      } else {
        for (std::int64_t c = 0; c < c_t; ++c) {
          out[c] = (pb2 * w_pb[c] + bb2 * w_j[c] + bb2 * w_i[c] + bb_ch * w_bb[c]) + b[c];
        }
      }
    }
  });
}

}  // namespace cpufold
