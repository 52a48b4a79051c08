#include "evoformer/extra_msa_embedder.h"

#include <algorithm>
#include <string>

#include "evoformer/embedder_support.h"
#include "ops/parallel_rows.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"
#include "ops/tensor_checks.h"

namespace cpufold {

ExtraMsaEmbedder::ExtraMsaEmbedder(const ParamScope& scope, std::int64_t c_in, std::int64_t c_e)
    : n_classes_(c_in - 2), c_e_(c_e) {
  const ParamScope s = scope / "extra_msa_activations";
  w_ = weight_floats(s.get("weights", {c_in, c_e}), "extra_msa_activations weights");
  bias_ = weight_floats(s.get("bias", {c_e}), "extra_msa_activations bias");
  if (n_classes_ < 1) {
    throw WeightsError("extra_msa_activations has " + std::to_string(c_in) +
                       " input channels; expected the MSA classes plus 2 deletion features");
  }
}

BufferList<ExtraMsaEmbedder::Buffers> ExtraMsaEmbedder::buffers(std::int64_t n_extra,
                                                                std::int64_t n_res, bool copy) {
  return BufferList<Buffers>({}).add_if(copy, {&Buffers::msa, DType::i64, Shape{n_extra, n_res}});
}

std::size_t ExtraMsaEmbedder::scratch_bytes(std::int64_t n_extra, std::int64_t n_res) {
  return buffers(n_extra, n_res, /*copy=*/true).bytes();
}

void ExtraMsaEmbedder::forward(const Tensor& extra_msa, const Tensor& extra_has_deletion,
                               const Tensor& extra_deletion_value, const Tensor& e,
                               const RunContext& ctx) const {
  if (extra_msa.rank() != 2) {
    throw InternalError("ExtraMsaEmbedder extra_msa is " + extra_msa.describe() +
                        "; expected [n_extra, n_res]");
  }
  const std::int64_t n_extra = extra_msa.dim(0), n_res = extra_msa.dim(1);
  expect_f32_shape(extra_has_deletion, {n_extra, n_res}, "ExtraMsaEmbedder extra_has_deletion");
  expect_f32_shape(extra_deletion_value, {n_extra, n_res}, "ExtraMsaEmbedder extra_deletion_value");
  detail::check_activation(e, Shape{n_extra, n_res, c_e_}, "ExtraMsaEmbedder output");
  if (!e.is_contiguous()) throw InternalError("ExtraMsaEmbedder output must be contiguous");

  ArenaScope scope(ctx.arena());
  const Buffers w = buffers(n_extra, n_res, needs_index_copy(extra_msa)).allocate(ctx.arena());
  const Tensor msa_t = contiguous_indices(extra_msa, w.msa, "extra_msa");
  check_index_range(msa_t, n_classes_, "extra_msa");
  const std::int64_t* msa = msa_t.data_as<std::int64_t>();
  const float* hd = extra_has_deletion.data_as<float>();
  const float* dv = extra_deletion_value.data_as<float>();
  const std::int64_t hd_s0 = extra_has_deletion.stride(0), hd_s1 = extra_has_deletion.stride(1);
  const std::int64_t dv_s0 = extra_deletion_value.stride(0), dv_s1 = extra_deletion_value.stride(1);
  const std::int64_t c_e = c_e_;
  const float* w_has = w_.data() + n_classes_ * c_e;
  const float* w_val = w_has + c_e;
  const float* b = bias_.data();
  const auto to_bf16 = detail::row_kernels().to_bf16;
  const bool narrow = e.dtype() == DType::bf16;
  detail::for_each_row(n_extra, n_res * c_e, [&](std::int64_t s) {
    // A bf16 output is computed in fp32 blocks of channels and rounded once.
    constexpr std::int64_t kBlock = 256;
    float block[kBlock];
    for (std::int64_t i = 0; i < n_res; ++i) {
      const std::int64_t row = s * n_res + i;
      const float* w = w_.data() + msa[row] * c_e;
      const float h = hd[s * hd_s0 + i * hd_s1];
      const float v = dv[s * dv_s0 + i * dv_s1];
      for (std::int64_t c0 = 0; c0 < c_e; c0 += kBlock) {
        const std::int64_t nc = std::min(kBlock, c_e - c0);
        float* dst = narrow ? block : static_cast<float*>(e.data()) + row * c_e + c0;
        for (std::int64_t c = 0; c < nc; ++c) {
          const std::int64_t k = c0 + c;
          dst[c] = (w[k] + h * w_has[k] + v * w_val[k]) + b[k];
        }
        if (narrow) to_bf16(block, static_cast<bf16*>(e.data()) + row * c_e + c0, nc);
      }
    }
  });
  ctx.trace("extra_msa_embedder", "out", e);
}

}  // namespace cpufold
