// Invariant point attention (AF2 Alg. 22) properties on the tiny model's weights: the output
// does not change when every frame is moved by the same rigid motion, masked residues receive
// no attention, and slicing the query rows does not change the result.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "io/model_config.h"
#include "ops/param_scope.h"
#include "structure/invariant_point_attention.h"
#include "structure/rigid.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

class InvariantPointAttentionTest : public ::testing::Test {
 protected:
  static constexpr std::int64_t kRes = 13;

  void SetUp() override {
    store_ = std::make_unique<WeightStore>(WeightStore::open(testing::tiny_params("model_1_ptm")));
    config_ = ModelConfig::from_weights(*store_);
    ipa_ = std::make_unique<InvariantPointAttention>(
        ParamScope(*store_, "structure_module/fold_iteration/invariant_point_attention"),
        config_.c_s, config_.c_z,
        IpaDims{config_.n_head_ipa, config_.c_ipa, config_.n_qk_points, config_.n_v_points});
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    s_.resize(static_cast<std::size_t>(kRes * config_.c_s));
    z_.resize(static_cast<std::size_t>(kRes * kRes * config_.c_z));
    for (float& x : s_) x = normal(rng);
    for (float& x : z_) x = normal(rng);
    for (std::int64_t i = 0; i < kRes; ++i) frames_.push_back(random_rigid(rng, 2.f));
    mask_.assign(kRes, 1.f);
  }

  // A uniformly random rotation (normalised Gaussian quaternion) and a translation of scale
  // `spread` (nm, as inside the structure module).
  static Rigid random_rigid(std::mt19937& rng, float spread) {
    std::normal_distribution<float> normal;
    const Rigid::Quat q(normal(rng), normal(rng), normal(rng), normal(rng));
    const Rigid::Vec3 t(spread * normal(rng), spread * normal(rng), spread * normal(rng));
    return Rigid::from_quaternion(q, t);
  }

  std::vector<float> run(const std::vector<Rigid>& frames, std::int64_t chunk) {
    Arena arena("test", dram_tier(), std::size_t{64} << 20);
    std::vector<float> out(static_cast<std::size_t>(kRes * config_.c_s));
    const Tensor s(s_.data(), DType::f32, Shape{kRes, config_.c_s});
    const Tensor z(z_.data(), DType::f32, Shape{kRes, kRes, config_.c_z});
    const Tensor mask(mask_.data(), DType::f32, Shape{kRes});
    const Tensor dst(out.data(), DType::f32, Shape{kRes, config_.c_s});
    RunContext ctx{&arena, chunk, nullptr, 0};
    ipa_->forward(s, z, nullptr, frames, mask, dst, /*accumulate=*/false, ctx);
    EXPECT_EQ(arena.used(), 0u);
    EXPECT_LE(arena.high_water(), ipa_->scratch_bytes(kRes, chunk, false, false));
    return out;
  }

  static double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    }
    return worst;
  }

  std::unique_ptr<WeightStore> store_;
  ModelConfig config_;
  std::unique_ptr<InvariantPointAttention> ipa_;
  std::vector<float> s_, z_, mask_;
  std::vector<Rigid> frames_;
};

TEST_F(InvariantPointAttentionTest, GlobalRigidMotionLeavesOutputUnchanged) {
  const std::vector<float> base = run(frames_, 0);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3; ++trial) {
    const Rigid motion = random_rigid(rng, 5.f);
    std::vector<Rigid> moved;
    for (const Rigid& f : frames_) moved.push_back(motion.compose(f));
    const double diff = max_abs_diff(run(moved, 0), base);
    EXPECT_LE(diff, 1e-4) << "trial " << trial;
    std::cout << "  max |Δ| under a global rigid motion: " << diff << "\n";
  }
}

TEST_F(InvariantPointAttentionTest, OutputDependsOnRelativeFrames) {
  // Moving one frame alone must change the result (the point terms are live).
  const std::vector<float> base = run(frames_, 0);
  std::vector<Rigid> moved = frames_;
  moved[3].trans += Rigid::Vec3(0.5f, -0.3f, 0.2f);
  EXPECT_GT(max_abs_diff(run(moved, 0), base), 1e-3);
}

TEST_F(InvariantPointAttentionTest, MaskedResidueGetsNoAttention) {
  const std::int64_t masked = 5;
  mask_[masked] = 0.f;
  const std::vector<float> base = run(frames_, 0);
  for (std::int64_t c = 0; c < config_.c_s; ++c)
    s_[static_cast<std::size_t>(masked * config_.c_s + c)] += 3.f;
  std::vector<Rigid> moved = frames_;
  moved[masked].trans += Rigid::Vec3(1.f, 1.f, 1.f);
  const std::vector<float> changed = run(moved, 0);
  for (std::int64_t i = 0; i < kRes; ++i) {
    if (i == masked) continue;
    for (std::int64_t c = 0; c < config_.c_s; ++c) {
      const std::size_t k = static_cast<std::size_t>(i * config_.c_s + c);
      ASSERT_EQ(changed[k], base[k]) << "residue " << i << " channel " << c;
    }
  }
}

TEST_F(InvariantPointAttentionTest, ChunkedQueryRowsMatchUnchunked) {
  const std::vector<float> base = run(frames_, 0);
  for (std::int64_t chunk : {1, 4, 12}) {
    const std::vector<float> chunked = run(frames_, chunk);
    for (std::size_t k = 0; k < base.size(); ++k) {
      const double tol = testing::kChunkInvarianceTolerance.atol +
                         testing::kChunkInvarianceTolerance.rtol * std::fabs(base[k]);
      ASSERT_LE(std::fabs(static_cast<double>(chunked[k]) - base[k]), tol)
          << "chunk " << chunk << " element " << k;
    }
  }
}

}  // namespace
}  // namespace cpufold
