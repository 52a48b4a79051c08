// Trunk::forward_bytes: which arena each phase's activations are planned in.
#include <gtest/gtest.h>

#include "evoformer/template_embedder.h"
#include "evoformer/trunk.h"
#include "memory/spill_window.h"
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

TEST(TrunkBytes, SpillTrafficCountsEachStagedPassAndTheOuterProductMeansRereads) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig c = ModelConfig::from_weights(store);
  const Trunk trunk(store, c);
  const TrunkDims d{/*n_res=*/256, /*n_seq=*/8, /*n_extra=*/5120, /*n_templ=*/0};
  // With the test weights' extra-MSA width (c_e = 8) the outer product mean keeps the right
  // projection of 5,120 rows in scratch only from 320 residues per slab on: below, it forms
  // tile pairs (2 tiles of 128 residues per side at a chunk of 64, 4 of 64 at 16), and a spilled
  // plan keeps both projections with the activations in those tiles, written once in one pass
  // over m and each tile read back once per tile of the other side.
  ASSERT_EQ(c.c_e, 8);
  ASSERT_EQ(c.n_extra_msa_blocks, 1);
  ChunkSizes coarse = ChunkSizes::all(64), fine = coarse;
  fine.extra_msa = 16;
  const std::size_t extra = f32_bytes({d.n_extra, d.n_res, c.c_e});
  const std::size_t right = f32_bytes({d.n_extra, d.n_res, c.extra_c_hidden_opm});
  const std::size_t fine_bytes = trunk.spill_traffic_bytes(d, fine, false, 0);
  const std::size_t coarse_bytes = trunk.spill_traffic_bytes(d, coarse, false, 0);
  EXPECT_EQ(fine_bytes - coarse_bytes, 2 * (4 - 2) * right);
  // The pair spilled too adds its passes and takes nothing away.
  EXPECT_GT(trunk.spill_traffic_bytes(d, coarse, true, 0), coarse_bytes);
  // At least the read-or-write passes of the extra-MSA block over its MSA (row attention two, the
  // global column attention three reads and a write, the transition running in its last pass,
  // the outer product mean's read) and its projections' (2 tiles of 128 residues: no tile is
  // padded).
  EXPECT_GE(coarse_bytes, 7 * extra + 2 * (1 + 2) * right);
  // Room to cache the extra-MSA representation whole: the MSA representations are streamed all
  // the same (SpillWindow::kAlwaysStaged), and only the projections' tiles are cached, each
  // written once and read once, when the block after drops them, whatever the chunk.
  const std::size_t cached = trunk.spill_traffic_bytes(d, fine, false, extra);
  EXPECT_EQ(fine_bytes - cached, 2 * (1 + 4 - 2) * right);
  EXPECT_EQ(coarse_bytes - trunk.spill_traffic_bytes(d, coarse, false, extra),
            2 * (1 + 2 - 2) * right);
}

// The outer product mean's tile pairs update the pair in blocks of a tile's rows and columns,
// about a chunk's rows of pairs, and its slabs' square blocks (the Evoformer's 8 rows) are no
// more rows than a spill slab of the pair or the chunk: a spilled pair's window stays that of the
// chunk's row passes.
TEST(TrunkBytes, TilePairsOfTheOuterProductMeanKeepThePairWindowOfTheChunksRows) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig c = ModelConfig::from_weights(store);
  const Trunk trunk(store, c);
  const TrunkDims d{/*n_res=*/256, /*n_seq=*/8, /*n_extra=*/5120, /*n_templ=*/0};
  for (const std::int64_t chunk : {1, 4, 16, 64}) {
    // 5,120 extra rows take tile pairs below 320 residues per slab (TrunkBytes above).
    const std::size_t rows =
        SpillWindow::resident_bytes(1, d.n_res, f32_bytes({d.n_res, c.c_z}), chunk);
    EXPECT_EQ(trunk.pair_window_bytes(d, ChunkSizes::all(chunk)), rows) << chunk;
  }
}

}  // namespace
}  // namespace cpufold
