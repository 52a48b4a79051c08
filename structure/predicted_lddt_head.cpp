#include "structure/predicted_lddt_head.h"

#include <algorithm>

#include "structure/confidence.h"
#include "structure/head_checks.h"

namespace cpufold {
namespace {

constexpr const char* kHead = "PredictedLddtHead";

LinearEpilogue relu_epilogue() {
  LinearEpilogue e;
  e.activation = Activation::relu;
  return e;
}

}  // namespace

PredictedLddtHead::PredictedLddtHead(const ParamScope& scope, std::int64_t c_s,
                                     std::int64_t c_hidden, std::int64_t n_bins)
    : c_s_(c_s),
      c_hidden_(c_hidden),
      n_bins_(n_bins),
      norm_((scope / "input_layer_norm").layer_norm(c_s)),
      act_0_((scope / "act_0").linear({c_s, c_hidden})),
      act_1_((scope / "act_1").linear({c_hidden, c_hidden})),
      logits_((scope / "logits").linear({c_hidden, n_bins})) {}

void PredictedLddtHead::forward(const Tensor& single, const Tensor& logits, const Tensor& plddt,
                                const RunContext& ctx) const {
  const std::int64_t n_res = single.rank() == 2 ? single.dim(0) : -1;
  detail::require_head_tensor(single, {n_res, c_s_}, kHead, "single");
  detail::require_head_tensor(logits, {n_res, n_bins_}, kHead, "lddt logits");
  if (!plddt.empty()) detail::require_head_tensor(plddt, {n_res}, kHead, "plddt");
  if (n_res == 0) return;

  Arena& arena = ctx.arena();
  {
    ArenaScope scope(arena);
    const Buffers b = buffers(n_res).allocate(arena);
    norm_.forward(single, b.normed);
    act_0_.forward(b.normed, b.h0, arena, relu_epilogue());
    act_1_.forward(b.h0, b.h1, arena, relu_epilogue());
    logits_.forward(b.h1, logits, arena);
  }
  ctx.trace("predicted_lddt_head", "logits", logits);
  if (!plddt.empty()) {
    compute_plddt(logits, plddt);
    ctx.trace("predicted_lddt_head", "plddt", plddt);
  }
}

BufferList<PredictedLddtHead::Buffers> PredictedLddtHead::buffers(std::int64_t n) const {
  return {{&Buffers::normed, DType::f32, Shape{n, c_s_}},
          {&Buffers::h0, DType::f32, Shape{n, c_hidden_}},
          {&Buffers::h1, DType::f32, Shape{n, c_hidden_}}};
}

std::size_t PredictedLddtHead::scratch_bytes(std::int64_t n_res) const {
  const std::size_t linears =
      std::max({act_0_.scratch_bytes(n_res, relu_epilogue().kind()),
                act_1_.scratch_bytes(n_res, relu_epilogue().kind()), logits_.scratch_bytes(n_res)});
  return buffers(n_res).bytes() + linears;
}

}  // namespace cpufold
