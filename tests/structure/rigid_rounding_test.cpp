// Rigid's float rounding at large coordinates (100-120 Å, where issue 11.6 saw the structure
// module drift): every frame operation must round exactly as the reference's written-out
// formulas (OpenFold rot_vec_mul / rot_matmul / quat_to_rot, AF2 r3), evaluated left to right
// in float. Both runs that make the reference's own spread use that order, so any other order
// adds noise of about ulp(|t|) that the spread does not contain. The accuracy against a double
// evaluation of the same formula is checked too, with a bound of a few float epsilons times
// the magnitudes involved.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "structure/rigid.h"

namespace cpufold {
namespace {

using Vec3 = Rigid::Vec3;
using Mat3 = Rigid::Mat3;
using Quat = Rigid::Quat;

constexpr int kSamples = 2000;
constexpr double kEps = std::numeric_limits<float>::epsilon();

// The reference's formulas, one float operation at a time (this file is compiled without FMA
// contraction, like rigid.cpp).
Vec3 ref_rot_vec_mul(const Mat3& r, const Vec3& x) {
  Vec3 out;
  for (int i = 0; i < 3; ++i) out[i] = r(i, 0) * x[0] + r(i, 1) * x[1] + r(i, 2) * x[2];
  return out;
}

Mat3 ref_rot_matmul(const Mat3& a, const Mat3& b) {
  Mat3 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j)
      out(i, j) = a(i, 0) * b(0, j) + a(i, 1) * b(1, j) + a(i, 2) * b(2, j);
  }
  return out;
}

// OpenFold quat_to_rot: products q_i·q_j times the ±1 / ±2 table entries, summed in table order.
Mat3 ref_quat_to_rot(const Quat& q) {
  const float a = q[0], b = q[1], c = q[2], d = q[3];
  Mat3 r;
  r << a * a + b * b - c * c - d * d, -2 * (a * d) + 2 * (b * c), 2 * (a * c) + 2 * (b * d),  //
      2 * (a * d) + 2 * (b * c), a * a - b * b + c * c - d * d, -2 * (a * b) + 2 * (c * d),   //
      -2 * (a * c) + 2 * (b * d), 2 * (a * b) + 2 * (c * d), a * a - b * b - c * c + d * d;
  return r;
}

struct Sample {
  Quat q;  // unit, as the structure module stores it
  Vec3 t;  // |t| in [100, 120]
  Vec3 x;  // a local point, a few Å
};

class RigidRounding : public ::testing::Test {
 protected:
  Sample next() {
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::uniform_real_distribution<float> mag(100.0f, 120.0f);
    Sample s;
    s.q = Quat(n(rng_), n(rng_), n(rng_), n(rng_));
    s.q = s.q / s.q.norm();
    const Vec3 dir = Vec3(n(rng_), n(rng_), n(rng_)).normalized();
    s.t = dir * mag(rng_);
    s.x = Vec3(n(rng_), n(rng_), n(rng_)) * 3.0f;
    return s;
  }
  std::mt19937 rng_{11};
};

TEST_F(RigidRounding, Tensor7FramesUseTheStoredUnitQuaternionAsIs) {
  for (int k = 0; k < kSamples; ++k) {
    const Sample s = next();
    float t7[7] = {s.q[0], s.q[1], s.q[2], s.q[3], s.t[0], s.t[1], s.t[2]};
    const Rigid f = Rigid::from_tensor_7(t7);
    ASSERT_EQ(f.rot, ref_quat_to_rot(s.q)) << "sample " << k;
    ASSERT_EQ(f.trans, s.t);
  }
}

TEST_F(RigidRounding, ApplyAndApplyInverseRoundAsTheReferenceAtLargeTranslations) {
  for (int k = 0; k < kSamples; ++k) {
    const Sample s = next();
    const Rigid f = Rigid::from_unit_quaternion(s.q, s.t);
    const Vec3 global = f.apply(s.x);
    ASSERT_EQ(global, Vec3(ref_rot_vec_mul(f.rot, s.x) + s.t)) << "sample " << k;
    // A global point back to local: (x - t) first, then Rᵀ (OpenFold Rigid.invert_apply).
    const Vec3 far = global + Vec3(7.0f, -5.0f, 3.0f);
    const Vec3 local = f.apply_inverse(far);
    ASSERT_EQ(local, ref_rot_vec_mul(Mat3(f.rot.transpose()), Vec3(far - s.t))) << "sample " << k;

    // Accuracy of the same formulas against double: R·x + t rounds each of three products and
    // three sums; |R·x| <= |x| and the last sum is of size |t|.
    const Eigen::Matrix3d rd = f.rot.cast<double>();
    const Eigen::Vector3d gd = rd * s.x.cast<double>() + s.t.cast<double>();
    const double bound_apply = 4 * kEps * (s.x.norm() + s.t.norm());
    EXPECT_LT((global.cast<double>() - gd).cwiseAbs().maxCoeff(), bound_apply) << "sample " << k;
    const Eigen::Vector3d ld = rd.transpose() * (far.cast<double>() - s.t.cast<double>());
    const double bound_inverse = 4 * kEps * (far.norm() + s.t.norm());
    EXPECT_LT((local.cast<double>() - ld).cwiseAbs().maxCoeff(), bound_inverse) << "sample " << k;
  }
}

TEST_F(RigidRounding, ComposeRoundsAsTheReferenceAtLargeTranslations) {
  for (int k = 0; k < kSamples; ++k) {
    const Sample a = next(), b = next();
    const Rigid fa = Rigid::from_unit_quaternion(a.q, a.t);
    const Rigid fb = Rigid::from_unit_quaternion(b.q, b.x);  // a local frame of a few Å
    const Rigid c = fa.compose(fb);
    ASSERT_EQ(c.rot, ref_rot_matmul(fa.rot, fb.rot)) << "sample " << k;
    ASSERT_EQ(c.trans, Vec3(ref_rot_vec_mul(fa.rot, fb.trans) + fa.trans)) << "sample " << k;
    const Eigen::Vector3d td = fa.rot.cast<double>() * fb.trans.cast<double>() + a.t.cast<double>();
    EXPECT_LT((c.trans.cast<double>() - td).cwiseAbs().maxCoeff(),
              4 * kEps * (fb.trans.norm() + a.t.norm()))
        << "sample " << k;
    const Rigid inv = fa.inverse();
    ASSERT_EQ(inv.trans, Vec3(-ref_rot_vec_mul(Mat3(fa.rot.transpose()), fa.trans)));
  }
}

}  // namespace
}  // namespace cpufold
