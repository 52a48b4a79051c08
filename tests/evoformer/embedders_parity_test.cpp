// Parity of the input, recycling and extra-MSA embedders with the reference traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "embedder_parity_util.h"
#include "evoformer/extra_msa_embedder.h"
#include "evoformer/input_embedder.h"
#include "evoformer/recycling_embedder.h"
#include "evoformer/relative_position.h"
#include "ops/param_scope.h"

namespace cpufold::testing {
namespace {

class EmbeddersParity : public ReferenceFixture {
 protected:
  ParamScope evoformer_scope() const { return ParamScope(*store_, "evoformer"); }

  InputEmbedder input_embedder() const {
    return InputEmbedder(evoformer_scope(), config_.target_feat_dim, config_.msa_feat_dim,
                         config_.c_m, config_.c_z, config_.max_relative_feature);
  }

  // The previous iteration's (m[0], z, pseudo-beta) as the reference recorded them, for
  // iteration k >= 1: the last Evoformer block's outputs and the last structure layer's atoms.
  struct Previous {
    Tensor msa_first_row, pair, pseudo_beta;
  };
  Previous previous(std::int64_t k) {
    const std::string last_block =
        "evoformer_block_" + std::to_string(config_.n_evoformer_blocks - 1);
    Previous p;
    p.msa_first_row = load(trace(last_block, k - 1, "out_0")).select(0, 0);
    p.pair = load(trace(last_block, k - 1, "out_1"));
    const Tensor positions = load(trace("structure_module", k - 1, "out/positions"));
    const Tensor atom14 = positions.select(0, positions.dim(0) - 1);
    p.pseudo_beta = data_.allocate(DType::f32, {atom14.dim(0), 3});
    pseudo_beta_from_atom14(feature("aatype", k - 1, DType::i64), atom14, p.pseudo_beta);
    return p;
  }
  Previous zeros(std::int64_t n_res) {
    Previous p;
    p.msa_first_row = data_.allocate(DType::f32, {n_res, config_.c_m});
    p.pair = data_.allocate(DType::f32, {n_res, n_res, config_.c_z});
    p.pseudo_beta = data_.allocate(DType::f32, {n_res, 3});
    for (const Tensor& t : {p.msa_first_row, p.pair, p.pseudo_beta}) {
      std::memset(t.data(), 0, t.nbytes());
    }
    return p;
  }
};

TEST_P(EmbeddersParity, InputEmbedderMatchesEveryIteration) {
  if (!open()) return;
  const InputEmbedder embedder = input_embedder();
  for (std::int64_t k = 0; k < iterations_; ++k) {
    ArenaScope scope(data_);
    const Tensor tf = feature("target_feat", k);
    const Tensor ri = feature("residue_index", k, DType::i64);
    const Tensor msa_feat = feature("msa_feat", k);
    const std::int64_t n_seq = msa_feat.dim(0), n_res = tf.dim(0);
    const Tensor m = data_.allocate(DType::f32, {n_seq, n_res, config_.c_m});
    const Tensor z = data_.allocate(DType::f32, {n_res, n_res, config_.c_z});
    embedder.forward(tf, ri, msa_feat, m, z, context(0, static_cast<int>(k)));
    expect_matches(trace("input_embedder", k, "out_0"), m);
    expect_matches(trace("input_embedder", k, "out_1"), z);
    EXPECT_EQ(scratch_.used(), 0u);
  }
}

// m may be the leading rows of a bigger MSA buffer; z may be accumulated into.
TEST_P(EmbeddersParity, InputEmbedderWritesIntoViewsAndAccumulates) {
  if (!open()) return;
  const InputEmbedder embedder = input_embedder();
  const Tensor tf = feature("target_feat", 0);
  const Tensor ri = feature("residue_index", 0, DType::i32);
  const Tensor msa_feat = feature("msa_feat", 0);
  const std::int64_t n_seq = msa_feat.dim(0), n_res = tf.dim(0);
  const Tensor m_all = data_.allocate(DType::f32, {n_seq + 3, n_res, config_.c_m});
  const Tensor m = m_all.slice(0, 0, n_seq);
  embedder.embed_msa(tf, msa_feat, m, context());
  expect_matches(trace("input_embedder", 0, "out_0"), m);

  // z starts at 1 everywhere: the result is 1 + the embedding.
  const Tensor z = data_.allocate(DType::f32, {n_res, n_res, config_.c_z});
  float* pz = z.data_as<float>();
  for (std::int64_t i = 0; i < z.numel(); ++i) pz[i] = 1.f;
  embedder.embed_pair(tf, ri, z, /*accumulate=*/true, context());
  std::vector<float> want = ref_->read_f32(trace("input_embedder", 0, "out_1"));
  for (float& v : want) v += 1.f;
  EXPECT_TRUE(
      matches_reference("z + input embedding", z, want, z.shape(), kRepresentationTolerance));
}

TEST_P(EmbeddersParity, RelativePositionEncodingClipsOffsets) {
  if (!open()) return;
  const std::int64_t k = config_.max_relative_feature, c_z = config_.c_z;
  const RelativePositionEncoding relpos(evoformer_scope(), k, c_z);
  // Residue indices with a chain break far beyond the clip distance.
  const std::int64_t n = 5;
  const Tensor ri = data_.allocate(DType::i64, {n});
  const std::int64_t idx[] = {0, 1, 2, 200, 201};
  std::memcpy(ri.data(), idx, sizeof(idx));
  const Tensor z = data_.allocate(DType::f32, {n, n, c_z});
  relpos.forward(ri, z, /*accumulate=*/false, context());
  const Tensor w = store_->require(std::string(kAf2Prefix) + "evoformer/pair_activiations//weights",
                                   {2 * k + 1, c_z});
  const Tensor b =
      store_->require(std::string(kAf2Prefix) + "evoformer/pair_activiations//bias", {c_z});
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t bin = std::clamp(idx[i] - idx[j], -k, k) + k;
      for (std::int64_t c = 0; c < c_z; ++c) {
        ASSERT_EQ(z.at<float>({i, j, c}), w.at<float>({bin, c}) + b.at<float>({c}))
            << "i " << i << " j " << j << " c " << c;
      }
    }
  }
}

TEST_P(EmbeddersParity, RecyclingEmbedderMatchesEveryIteration) {
  if (!open()) return;
  const RecyclingEmbedder embedder(evoformer_scope(), config_.c_m, config_.c_z,
                                   config_.recycle_pos_bins);
  const std::int64_t n_res = ref_->shape("inputs/aatype")[0];
  for (std::int64_t k = 0; k < iterations_; ++k) {
    SCOPED_TRACE("iteration " + std::to_string(k));
    ArenaScope scope(data_);
    const Previous prev = k == 0 ? zeros(n_res) : previous(k);
    std::vector<float> unchunked;
    // Accumulating into zeros, in row blocks of all, 3 and 5 (a ragged last block).
    for (std::int64_t chunk : {0, 3, 5}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      ArenaScope inner(data_);
      Previous out = zeros(n_res);
      embedder.forward(prev.msa_first_row, prev.pair, prev.pseudo_beta, out.msa_first_row, out.pair,
                       /*accumulate=*/true, context(chunk, static_cast<int>(k)));
      expect_matches(trace("recycling_embedder", k, "out_0"), out.msa_first_row);
      expect_matches(trace("recycling_embedder", k, "out_1"), out.pair);
      EXPECT_EQ(scratch_.used(), 0u);
      if (chunk == 0) {
        unchunked.assign(out.pair.data_as<float>(), out.pair.data_as<float>() + out.pair.numel());
      } else {
        EXPECT_TRUE(matches_reference("chunked vs unchunked", out.pair, unchunked, out.pair.shape(),
                                      kChunkInvarianceTolerance));
      }
    }
    // In place: the previous representations turn into the updates.
    embedder.forward(prev.msa_first_row, prev.pair, prev.pseudo_beta, prev.msa_first_row, prev.pair,
                     /*accumulate=*/false, context(0, static_cast<int>(k)));
    expect_matches(trace("recycling_embedder", k, "out_0"), prev.msa_first_row);
    expect_matches(trace("recycling_embedder", k, "out_1"), prev.pair);
  }
}

TEST_P(EmbeddersParity, ExtraMsaEmbedderMatchesEveryIteration) {
  if (!open()) return;
  const ExtraMsaEmbedder embedder(evoformer_scope(), config_.extra_msa_feat_dim, config_.c_e);
  for (std::int64_t k = 0; k < iterations_; ++k) {
    ArenaScope scope(data_);
    const Tensor msa = feature("extra_msa", k, DType::i64);
    const Tensor has_del = feature("extra_has_deletion", k);
    const Tensor del_val = feature("extra_deletion_value", k);
    const Tensor e = data_.allocate(DType::f32, {msa.dim(0), msa.dim(1), config_.c_e});
    embedder.forward(msa, has_del, del_val, e, context(0, static_cast<int>(k)));
    expect_matches(trace("extra_msa_embedder", k, "out"), e);
  }
}

TEST_P(EmbeddersParity, ExtraMsaEmbedderRejectsOutOfRangeTokens) {
  if (!open()) return;
  const ExtraMsaEmbedder embedder(evoformer_scope(), config_.extra_msa_feat_dim, config_.c_e);
  const Tensor msa = feature("extra_msa", 0, DType::i64);
  msa.at<std::int64_t>({1, 2}) = 23;
  const Tensor has_del = feature("extra_has_deletion", 0);
  const Tensor del_val = feature("extra_deletion_value", 0);
  const Tensor e = data_.allocate(DType::f32, {msa.dim(0), msa.dim(1), config_.c_e});
  EXPECT_THROW(embedder.forward(msa, has_del, del_val, e, context()), InputError);
}

// Each module's scratch_bytes() is enough: an arena of exactly that size never runs out.
TEST_P(EmbeddersParity, ScratchStaysWithinPrediction) {
  if (!open()) return;
  const auto exact_arena = [](std::size_t bytes) {
    return Arena("exact", dram_tier(), std::max<std::size_t>(bytes, 64));
  };
  const Tensor tf = feature("target_feat", 0);
  const Tensor ri = feature("residue_index", 0, DType::i32);  // i32: the copy path
  const Tensor msa_feat = feature("msa_feat", 0);
  const std::int64_t n_seq = msa_feat.dim(0), n_res = tf.dim(0);
  const Tensor m = data_.allocate(DType::f32, {n_seq, n_res, config_.c_m});
  const Tensor z = data_.allocate(DType::f32, {n_res, n_res, config_.c_z});
  {
    const InputEmbedder embedder = input_embedder();
    Arena arena = exact_arena(embedder.scratch_bytes(n_seq, n_res));
    RunContext ctx;
    ctx.scratch = &arena;
    EXPECT_NO_THROW(embedder.forward(tf, ri, msa_feat, m, z, ctx));
  }
  {
    const RecyclingEmbedder embedder(evoformer_scope(), config_.c_m, config_.c_z,
                                     config_.recycle_pos_bins);
    const Previous prev = zeros(n_res);
    for (std::int64_t chunk : {0, 5}) {
      for (bool accumulate : {false, true}) {
        Arena arena = exact_arena(
            RecyclingEmbedder::scratch_bytes(n_res, config_.c_m, config_.c_z, accumulate, chunk));
        RunContext ctx;
        ctx.scratch = &arena;
        ctx.chunk = chunk;
        EXPECT_NO_THROW(embedder.forward(prev.msa_first_row, prev.pair, prev.pseudo_beta,
                                         m.select(0, 0), z, accumulate, ctx));
      }
    }
  }
  // The extra MSA copied (i32) or read in place (i64), into an fp32 or a bf16 representation.
  const ExtraMsaEmbedder extra(evoformer_scope(), config_.extra_msa_feat_dim, config_.c_e);
  for (const DType index : {DType::i32, DType::i64}) {
    for (const DType type : {DType::f32, DType::bf16}) {
      const Tensor msa = feature("extra_msa", 0, index);
      const Tensor e = data_.allocate(type, {msa.dim(0), msa.dim(1), config_.c_e});
      Arena arena = exact_arena(ExtraMsaEmbedder::scratch_bytes(msa.dim(0), msa.dim(1)));
      RunContext ctx;
      ctx.scratch = &arena;
      EXPECT_NO_THROW(extra.forward(msa, feature("extra_has_deletion", 0),
                                    feature("extra_deletion_value", 0), e, ctx));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, EmbeddersParity, ::testing::ValuesIn(all_cases()),
                         reference_case_name);

// Glycine takes CA, unknown residues the origin, everything else CB.
TEST(PseudoBeta, PicksCbCaOrOrigin) {
  Arena arena("test", dram_tier(), 1 << 20);
  const Tensor aatype = arena.allocate(DType::i64, {3});
  aatype.at<std::int64_t>({0}) = 0;
  aatype.at<std::int64_t>({1}) = kGlycine;
  aatype.at<std::int64_t>({2}) = kUnknownRestype;
  const Tensor atom14 = arena.allocate(DType::f32, {3, 14, 3});
  const Tensor atom37 = arena.allocate(DType::f32, {3, 37, 3});
  for (std::int64_t i = 0; i < 3; ++i) {
    for (std::int64_t a = 0; a < 37; ++a) {
      for (std::int64_t x = 0; x < 3; ++x) {
        const float v = static_cast<float>(100 * i + 10 * a + x);
        atom37.at<float>({i, a, x}) = v;
        if (a < 14) atom14.at<float>({i, a, x}) = v;
      }
    }
  }
  const Tensor from14 = arena.allocate(DType::f32, {3, 3});
  const Tensor from37 = arena.allocate(DType::f32, {3, 3});
  pseudo_beta_from_atom14(aatype, atom14, from14);
  pseudo_beta_from_atom37(aatype, atom37, from37);
  for (std::int64_t x = 0; x < 3; ++x) {
    EXPECT_EQ(from14.at<float>({0, x}), static_cast<float>(10 * kAtom14Cb + x));
    EXPECT_EQ(from37.at<float>({0, x}), static_cast<float>(10 * kAtom37Cb + x));
    EXPECT_EQ(from14.at<float>({1, x}), static_cast<float>(100 + 10 * kAtom14Ca + x));
    EXPECT_EQ(from37.at<float>({1, x}), static_cast<float>(100 + 10 * kAtom37Ca + x));
    EXPECT_EQ(from14.at<float>({2, x}), 0.f);
  }
}

// OpenFold's squared-distance bins: both edges exclusive, the last bin open up to `inf`.
TEST(DistanceBins, EdgesAreExclusiveAndLastBinIsOpen) {
  const DistanceBins bins(3.25f, 20.75f, 15, 1e8f);
  ASSERT_EQ(bins.size(), 15);
  EXPECT_EQ(bins.lower(0), 3.25f * 3.25f);
  EXPECT_EQ(bins.lower(14), 20.75f * 20.75f);
  EXPECT_EQ(bins.bin(0.f), -1);
  EXPECT_EQ(bins.bin(3.25f * 3.25f), -1);
  EXPECT_EQ(bins.bin(4.f * 4.f), 0);
  EXPECT_EQ(bins.bin(4.5f * 4.5f), -1);  // exactly on the edge between bins 0 and 1
  EXPECT_EQ(bins.bin(4.6f * 4.6f), 1);
  EXPECT_EQ(bins.bin(20.f * 20.f), 13);
  EXPECT_EQ(bins.bin(21.f * 21.f), 14);
  EXPECT_EQ(bins.bin(1e7f), 14);
  EXPECT_EQ(bins.bin(1e8f), -1);
  EXPECT_EQ(bins.bin(std::nanf("")), -1);
}

}  // namespace
}  // namespace cpufold::testing
