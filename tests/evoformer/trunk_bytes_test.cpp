// Trunk::forward_bytes: which arena each phase's activations are planned in.
#include <gtest/gtest.h>

#include "evoformer/template_embedder.h"
#include "evoformer/trunk.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

// Long and shallow: the templates' pair activations (n_templ·N²·c_t) outweigh the MSA ones.
constexpr TrunkDims kLongFewRows{/*n_res=*/200, /*n_seq=*/4, /*n_extra=*/4, /*n_templ=*/4};

TEST(TrunkBytes, TemplatePairActivationsAndTheirEdgeArePlannedInTheActivationArenaWhenApart) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig c = ModelConfig::from_weights(store);
  const Trunk trunk(store, c);
  const TemplateEmbedder templates(store, c);
  const std::size_t template_pairs =
      f32_bytes(kLongFewRows.n_templ * kLongFewRows.n_res * kLongFewRows.n_res * c.c_t);
  for (const std::int64_t chunk : {0, 8}) {
    const TrunkBytes together =
        trunk.forward_bytes(kLongFewRows, ChunkSizes::all(chunk), /*apart=*/false);
    const TrunkBytes apart =
        trunk.forward_bytes(kLongFewRows, ChunkSizes::all(chunk), /*apart=*/true);
    EXPECT_GE(together.scratch, template_pairs) << chunk;
    // Apart, the template pairs and the triangle multiplications' right edge above them are in
    // the activation arena, and out of the scratch arena.
    EXPECT_GE(apart.activations, template_pairs + templates.edge_bytes(kLongFewRows.n_res))
        << chunk;
    EXPECT_LT(apart.scratch, together.scratch) << chunk;
  }
}

}  // namespace
}  // namespace cpufold
