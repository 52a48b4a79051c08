// Scratch bytes each module plans for (its transients), at the widths of a parameter file, for
// the residue counts and chunk sizes given: the table behind "every transient is bounded by its
// chunk". Run by hand, not a ctest test:
//   scratch_table PARAMS.h5 [N ...] -- [CHUNK ...]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "evoformer/evoformer_block.h"
#include "evoformer/msa_column_attention.h"
#include "evoformer/msa_column_global_attention.h"
#include "evoformer/msa_row_attention_with_pair_bias.h"
#include "evoformer/outer_product_mean.h"
#include "evoformer/template_embedder.h"
#include "evoformer/template_pair_block.h"
#include "evoformer/template_pointwise_attention.h"
#include "evoformer/transition.h"
#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "evoformer/trunk.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/prediction_heads.h"
#include "structure/structure_module.h"

using namespace cpufold;

namespace {

// The full configuration's inputs besides N: 512 clusters + 4 template rows, 5120 extra rows.
constexpr std::int64_t kRows = 516, kExtra = 5120, kTempl = 4;

using Row = std::pair<std::string, std::function<std::size_t(std::int64_t n, std::int64_t chunk)>>;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scratch_table PARAMS.h5 [N ...] -- [CHUNK ...]\n");
    return 2;
  }
  std::vector<std::int64_t> ns, chunks;
  bool after = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      after = true;
      continue;
    }
    (after ? chunks : ns).push_back(std::atoll(argv[i]));
  }
  if (ns.empty()) ns = {256, 1000};
  if (chunks.empty()) chunks = {0, 4};

  const ModelWeights weights = open_model_weights(argv[1]);
  const WeightStore& store = weights.store;
  const ModelConfig& c = weights.config;
  const ParamScope evo(store, "evoformer/evoformer_iteration", 0, c.n_evoformer_blocks);
  const ParamScope ext(store, "evoformer/extra_msa_stack", 0, c.n_extra_msa_blocks);
  using Dir = TriangleMultiplication::Direction;
  using Node = TriangleAttention::Node;

  const MsaRowAttentionWithPairBias row(evo / "msa_row_attention_with_pair_bias", c.c_m, c.c_z,
                                        c.msa_row_attention);
  const MsaColumnAttention col(evo / "msa_column_attention", c.c_m, c.msa_column_attention);
  const Transition msa_tr(evo / "msa_transition", c.c_m, c.msa_transition_factor);
  const OuterProductMean opm(evo / "outer_product_mean", c.c_m, c.c_z, c.c_hidden_opm);
  const TriangleMultiplication tmo(evo / "triangle_multiplication_outgoing", c.c_z,
                                   c.c_hidden_tri_mul, Dir::outgoing);
  const TriangleMultiplication tmi(evo / "triangle_multiplication_incoming", c.c_z,
                                   c.c_hidden_tri_mul, Dir::incoming);
  const TriangleAttention tas(evo / "triangle_attention_starting_node", c.c_z, c.triangle_attention,
                              Node::starting);
  const Transition pair_tr(evo / "pair_transition", c.c_z, c.pair_transition_factor);
  const MsaRowAttentionWithPairBias xrow(ext / "msa_row_attention_with_pair_bias", c.c_e, c.c_z,
                                         c.extra_msa_row_attention);
  const MsaColumnGlobalAttention xcol(ext / "msa_column_global_attention", c.c_e,
                                      c.extra_msa_global_attention);
  const Transition xtr(ext / "msa_transition", c.c_e, c.extra_msa_transition_factor);
  const OuterProductMean xopm(ext / "outer_product_mean", c.c_e, c.c_z, c.extra_c_hidden_opm);
  const EvoformerBlock evo_block(store, c, EvoformerBlock::Kind::evoformer, 0);
  const EvoformerBlock extra_block(store, c, EvoformerBlock::Kind::extra_msa, 0);
  const TemplateEmbedder templates(store, c);
  const ParamScope tblock(
      store,
      "evoformer/template_embedding/single_template_embedding/template_pair_stack/"
      "__layer_stack_no_state",
      0, c.n_template_blocks);
  const TemplatePairBlock tpair(tblock, c);
  const TemplatePointwiseAttention tpoint(
      ParamScope(store, "evoformer") / "template_embedding/attention", c.c_z, c.c_t,
      c.template_pointwise_attention);
  const StructureModule sm(store, c);
  const PredictionHeads heads(store, c);
  const Trunk trunk(store, c);

  const std::vector<Row> rows = {
      {"evo msa_row_attention", [&](auto n, auto k) { return row.scratch_bytes(kRows, n, k); }},
      {"evo msa_column_attention", [&](auto n, auto k) { return col.scratch_bytes(kRows, n, k); }},
      {"evo msa_transition",
       [&](auto n, auto k) { return msa_tr.scratch_bytes(kRows, n, k, false); }},
      {"evo outer_product_mean", [&](auto n, auto k) { return opm.scratch_bytes(kRows, n, k); }},
      {"evo tri_mul_outgoing", [&](auto n, auto k) { return tmo.scratch_bytes(n, k); }},
      {"evo tri_mul_incoming", [&](auto n, auto k) { return tmi.scratch_bytes(n, k); }},
      {"evo tri_att_starting", [&](auto n, auto k) { return tas.scratch_bytes(n, k); }},
      {"evo pair_transition",
       [&](auto n, auto k) { return pair_tr.scratch_bytes(n, n, k, false); }},
      {"EvoformerBlock", [&](auto n, auto k) { return evo_block.scratch_bytes(kRows, n, k); }},
      {"extra msa_row_attention", [&](auto n, auto k) { return xrow.scratch_bytes(kExtra, n, k); }},
      {"extra msa_column_global", [&](auto n, auto k) { return xcol.scratch_bytes(kExtra, n, k); }},
      {"extra msa_transition",
       [&](auto n, auto k) { return xtr.scratch_bytes(kExtra, n, k, false); }},
      {"extra outer_product_mean",
       [&](auto n, auto k) { return xopm.scratch_bytes(kExtra, n, k); }},
      {"ExtraMsaBlock", [&](auto n, auto k) { return extra_block.scratch_bytes(kExtra, n, k); }},
      {"template pair block", [&](auto n, auto k) { return tpair.scratch_bytes(n, k); }},
      {"template pointwise att",
       [&](auto n, auto k) { return tpoint.scratch_bytes(kTempl, n, k, true); }},
      {"TemplateEmbedder", [&](auto n, auto k) { return templates.scratch_bytes(kTempl, n, k); }},
      {"StructureModule", [&](auto n, auto k) { return sm.scratch_bytes(n, k); }},
      {"PredictionHeads", [&](auto n, auto) { return heads.scratch_bytes(kRows, n); }},
      {"Trunk (total)",
       [&](auto n, auto k) {
         return trunk.forward_bytes({n, kRows - kTempl, kExtra, kTempl}, ChunkSizes::all(k), false)
             .scratch;
       }},
  };
  std::printf("%-26s", "MiB");
  for (const auto n : ns)
    for (const auto k : chunks)
      std::printf(" N%lld/c%-4lld", static_cast<long long>(n), static_cast<long long>(k));
  std::printf("\n");
  for (const auto& [name, f] : rows) {
    std::printf("%-26s", name.c_str());
    for (const auto n : ns)
      for (const auto k : chunks) std::printf(" %9.1f", static_cast<double>(f(n, k)) / (1 << 20));
    std::printf("\n");
  }
  return 0;
}
