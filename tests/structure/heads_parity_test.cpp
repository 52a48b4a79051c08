// Parity of AF2's output heads (Alg. 29, Sec. 1.9.7-1.9.10) with the reference: each head reads
// the reference's own inputs for it (outputs/sm/single, single, pair, msa) and must give the
// reference's logits and confidence metrics, for every tiny file and the full-width ones.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/param_scope.h"
#include "structure/distogram_head.h"
#include "structure/experimentally_resolved_head.h"
#include "structure/masked_msa_head.h"
#include "structure/predicted_aligned_error_head.h"
#include "structure/predicted_lddt_head.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold::testing {
namespace {

class HeadsParity : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  void SetUp() override {
    const ResolvedCase c = resolve(GetParam());
    if (c.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
    if (c.reference.empty() || c.params.empty()) return;  // resolve() failed the test
    ref_ = std::make_unique<Hdf5TensorReader>(c.reference);
    store_ = std::make_unique<WeightStore>(WeightStore::open(c.params));
    cfg_ = ModelConfig::from_weights(*store_);
    n_res_ = ref_->shape("outputs/single")[0];
  }

  bool ready() const { return ref_ != nullptr; }
  ParamScope scope(const std::string& head) const { return ParamScope(*store_, head); }

  // A context over an arena of exactly `bytes`: a short scratch estimate throws BudgetError.
  struct Context {
    Arena arena;
    RunContext ctx;
    explicit Context(std::size_t bytes) : arena(sized_arena(bytes)) { ctx.scratch = &arena; }
  };

  // A scalar dataset compared as one element.
  void expect_scalar(const std::string& name, float ours, Tolerance tol) const {
    const Tensor view(&ours, DType::f32, Shape{1});
    const ::testing::AssertionResult r =
        matches_reference(name, view, ref_->read_f32(name), Shape{1}, tol);
    if (r) std::cout << "[ parity   ] " << r.message() << "\n";
    EXPECT_TRUE(r);
  }

  std::unique_ptr<Hdf5TensorReader> ref_;
  std::unique_ptr<WeightStore> store_;
  ModelConfig cfg_;
  std::int64_t n_res_ = 0;
};

TEST_P(HeadsParity, PredictedLddtHead) {
  if (!ready()) return;
  const PredictedLddtHead head(scope("predicted_lddt_head"), cfg_.c_s, cfg_.c_lddt_hidden,
                               cfg_.lddt_bins);
  const OwnedTensor single(*ref_, "outputs/sm/single");
  OwnedTensor logits(Shape{n_res_, cfg_.lddt_bins});
  OwnedTensor plddt(Shape{n_res_});
  Context c(head.scratch_bytes(n_res_));
  head.forward(single.view, logits.view, plddt.view, c.ctx);
  EXPECT_EQ(c.arena.used(), 0u) << "scratch not released";
  expect_matches(*ref_, "outputs/lddt_logits", logits.view);
  expect_matches(*ref_, "outputs/plddt", plddt.view, kPlddtTolerance);
}

TEST_P(HeadsParity, DistogramHead) {
  if (!ready()) return;
  const DistogramHead head(scope("distogram_head"), cfg_.c_z, cfg_.distogram_bins);
  const OwnedTensor pair(*ref_, "outputs/pair");
  OwnedTensor logits(Shape{n_res_, n_res_, cfg_.distogram_bins});
  Context c(head.scratch_bytes(n_res_));
  head.forward(pair.view, logits.view, c.ctx);
  EXPECT_EQ(c.arena.used(), 0u) << "scratch not released";
  expect_matches(*ref_, "outputs/distogram_logits", logits.view);
}

TEST_P(HeadsParity, MaskedMsaHead) {
  if (!ready()) return;
  const MaskedMsaHead head(scope("masked_msa_head"), cfg_.c_m, cfg_.masked_msa_classes);
  const OwnedTensor msa(*ref_, "outputs/msa");
  const std::int64_t n_seq = msa.view.dim(0);
  OwnedTensor logits(Shape{n_seq, n_res_, cfg_.masked_msa_classes});
  Context c(head.scratch_bytes(n_seq, n_res_));
  head.forward(msa.view, logits.view, c.ctx);
  EXPECT_EQ(c.arena.used(), 0u) << "scratch not released";
  expect_matches(*ref_, "outputs/masked_msa_logits", logits.view);
}

TEST_P(HeadsParity, ExperimentallyResolvedHead) {
  if (!ready()) return;
  const ExperimentallyResolvedHead head(scope("experimentally_resolved_head"), cfg_.c_s,
                                        cfg_.atom_types);
  // The Evoformer single, not the structure module's final single.
  const OwnedTensor single(*ref_, "outputs/single");
  OwnedTensor logits(Shape{n_res_, cfg_.atom_types});
  Context c(head.scratch_bytes(n_res_));
  head.forward(single.view, logits.view, c.ctx);
  EXPECT_EQ(c.arena.used(), 0u) << "scratch not released";
  expect_matches(*ref_, "outputs/experimentally_resolved_logits", logits.view);
}

TEST_P(HeadsParity, PredictedAlignedErrorHead) {
  if (!ready()) return;
  ASSERT_TRUE(cfg_.ptm_head);
  const PredictedAlignedErrorHead head(scope("predicted_aligned_error_head"), cfg_.c_z,
                                       cfg_.pae_bins);
  const OwnedTensor pair(*ref_, "outputs/pair");
  // AF2 weights pTM by the sequence mask of the last iteration (all ones here, as OpenFold's
  // default).
  const OwnedTensor seq_mask_all(*ref_, "inputs/seq_mask");
  OwnedTensor seq_mask(Shape{n_res_});
  const std::int64_t iters = seq_mask_all.view.dim(1);
  for (std::int64_t i = 0; i < n_res_; ++i) {
    seq_mask.data[static_cast<std::size_t>(i)] = seq_mask_all.view.at<float>({i, iters - 1});
  }

  const Shape bins{n_res_, n_res_, cfg_.pae_bins};
  for (const bool probs_given : {true, false}) {
    SCOPED_TRACE(probs_given ? "caller probs" : "scratch probs");
    OwnedTensor logits(bins), probs(bins), pae(Shape{n_res_, n_res_});
    Context c(head.scratch_bytes(n_res_, probs_given));
    const AlignedErrorScores scores =
        head.forward(pair.view, seq_mask.view, logits.view, probs_given ? probs.view : Tensor(),
                     pae.view, c.ctx);
    EXPECT_EQ(c.arena.used(), 0u) << "scratch not released";
    expect_matches(*ref_, "outputs/tm_logits", logits.view);
    if (probs_given) expect_matches(*ref_, "outputs/aligned_confidence_probs", probs.view);
    expect_matches(*ref_, "outputs/predicted_aligned_error", pae.view, kPaeTolerance);
    expect_scalar("outputs/max_predicted_aligned_error", scores.max_predicted_aligned_error,
                  kPaeTolerance);
    expect_scalar("outputs/ptm_score", scores.ptm, kPtmTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Heads, HeadsParity, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace cpufold::testing
