// Geometry checks of Rigid, the residue constants and the atom builder that do not compare with
// the reference's numbers: algebraic identities, orthonormality, ideal bond lengths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "io/hdf5_tensor_file.h"
#include "memory/error.h"
#include "structure/atom_builder.h"
#include "structure/residue_constants.h"
#include "structure/rigid.h"
#include "tests/support/parity.h"

namespace cpufold::testing {
namespace {

using Vec3 = Rigid::Vec3;

Rigid random_rigid(std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  return Rigid::from_quaternion(Rigid::Quat(n(rng), n(rng), n(rng), n(rng)),
                                Vec3(10 * n(rng), 10 * n(rng), 10 * n(rng)));
}

void expect_proper_rotation(const Rigid::Mat3& r, double tol, const std::string& what) {
  EXPECT_LT((r * r.transpose() - Rigid::Mat3::Identity()).cwiseAbs().maxCoeff(), tol) << what;
  EXPECT_NEAR(r.determinant(), 1.0, tol) << what;
}

TEST(Rigid, ComposedWithItsInverseIsIdentity) {
  std::mt19937 rng(1);
  for (int t = 0; t < 100; ++t) {
    const Rigid a = random_rigid(rng);
    for (const Rigid& id : {a.compose(a.inverse()), a.inverse().compose(a)}) {
      EXPECT_LT((id.rot - Rigid::Mat3::Identity()).cwiseAbs().maxCoeff(), 1e-6);
      EXPECT_LT(id.trans.cwiseAbs().maxCoeff(), 1e-5);  // |t| ~ 10 Å: fp32 rounding of 1e-6·|t|
    }
  }
}

TEST(Rigid, ComposeApplyAndApplyInverseAgree) {
  std::mt19937 rng(2);
  const Rigid a = random_rigid(rng), b = random_rigid(rng);
  const Vec3 x(1.5f, -2.0f, 0.25f);
  EXPECT_LT((a.compose(b).apply(x) - a.apply(b.apply(x))).norm(), 1e-5);
  EXPECT_LT((a.apply_inverse(a.apply(x)) - x).norm(), 1e-5);
  EXPECT_LT((a.inverse().apply(x) - a.apply_inverse(x)).norm(), 1e-5);
}

TEST(Rigid, QuaternionRotationQuaternionRoundTrip) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int t = 0; t < 200; ++t) {
    Rigid::Quat q(n(rng), n(rng), n(rng), n(rng));
    q /= q.norm();
    if (q[0] < 0) q = -q;
    const Rigid r = Rigid::from_quaternion(q, Vec3::Zero());
    expect_proper_rotation(r.rot, 1e-6, "from_quaternion");
    EXPECT_LT((r.to_quaternion() - q).cwiseAbs().maxCoeff(), 1e-6) << q.transpose();
  }
  // Unnormalised input is normalised first; identity and a 180° turn about z.
  EXPECT_LT(
      (Rigid::from_quaternion(Rigid::Quat(3, 0, 0, 0), Vec3::Zero()).rot - Rigid::Mat3::Identity())
          .norm(),
      1e-7);
  const Rigid half_turn = Rigid::from_quaternion(Rigid::Quat(0, 0, 0, 1), Vec3::Zero());
  EXPECT_LT((half_turn.apply(Vec3(1, 0, 0)) - Vec3(-1, 0, 0)).norm(), 1e-7);
  EXPECT_LT((half_turn.to_quaternion() - Rigid::Quat(0, 0, 0, 1)).norm(), 1e-7);
}

TEST(Rigid, Tensor7And4x4RoundTrip) {
  std::mt19937 rng(4);
  const Rigid a = random_rigid(rng);
  float t7[7], m[16];
  a.to_tensor_7(t7);
  a.to_tensor_4x4(m);
  const Rigid b = Rigid::from_tensor_7(t7), c = Rigid::from_tensor_4x4(m);
  EXPECT_LT((b.rot - a.rot).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_EQ(b.trans, a.trans);
  EXPECT_EQ(c.rot, a.rot);
  EXPECT_EQ(c.trans, a.trans);
  EXPECT_EQ(m[3], a.trans[0]);  // row-major [R t; 0 0 0 1]
  EXPECT_EQ(m[12], 0.0f);
  EXPECT_EQ(m[15], 1.0f);
}

// AF2 Alg. 21: e1 along x3 - x2, x1 in the e1-e2 half plane with positive e2, origin x2.
TEST(Rigid, FromThreePointsIsAProperFrame) {
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 3.0f);
  for (int t = 0; t < 100; ++t) {
    const Vec3 x1(n(rng), n(rng), n(rng)), x2(n(rng), n(rng), n(rng)), x3(n(rng), n(rng), n(rng));
    const Rigid f = Rigid::from_3_points(x1, x2, x3);
    expect_proper_rotation(f.rot, 1e-5, "from_3_points");
    EXPECT_EQ(f.trans, x2);
    const Vec3 l3 = f.apply_inverse(x3), l1 = f.apply_inverse(x1);
    EXPECT_NEAR(l3[1], 0, 1e-4);
    EXPECT_NEAR(l3[2], 0, 1e-4);
    EXPECT_GT(l3[0], 0);
    EXPECT_NEAR(l1[2], 0, 1e-4);
    EXPECT_GT(l1[1], 0);
  }
}

TEST(ResidueConstants, TablesHaveAf2Shapes) {
  const ResidueConstants& rc = residue_constants();
  EXPECT_EQ(restype_index('A'), 0);
  EXPECT_EQ(restype_index('V'), 19);
  EXPECT_EQ(restype_index('B'), kUnknownRestypeIndex);
  EXPECT_EQ(atom37_index("CA"), 1);
  EXPECT_EQ(atom37_index("OXT"), 36);
  EXPECT_EQ(atom37_index("XX"), -1);
  // Heavy-atom counts: GLY 4, ALA 5, TRP 14, X none.
  const auto count = [&](int r) {
    int n = 0;
    for (float m : rc.atom14_mask[r]) n += m != 0;
    return n;
  };
  EXPECT_EQ(count(restype_index('G')), 4);
  EXPECT_EQ(count(restype_index('A')), 5);
  EXPECT_EQ(count(restype_index('W')), 14);
  EXPECT_EQ(count(kUnknownRestypeIndex), 0);
  // chi counts: ARG and LYS 4, GLY and ALA 0.
  const auto chis = [&](char c) {
    int n = 0;
    for (float m : rc.chi_angles_mask[restype_index(c)]) n += m != 0;
    return n;
  };
  EXPECT_EQ(chis('R'), 4);
  EXPECT_EQ(chis('K'), 4);
  EXPECT_EQ(chis('G'), 0);
  EXPECT_EQ(chis('A'), 0);
  EXPECT_EQ(chis('V'), 1);
  EXPECT_EQ(rc.chi_pi_periodic[restype_index('D')][1], 1.0f);
  // Every atom14 slot maps to the atom37 slot of the same name and back.
  for (int r = 0; r < kNumRestypes; ++r) {
    for (int k = 0; k < kNumAtom14; ++k) {
      if (rc.atom14_mask[r][k] == 0) continue;
      const int a = rc.atom14_to_atom37[r][k];
      EXPECT_EQ(rc.atom37_names[a], rc.atom14_names[r][k]);
      EXPECT_EQ(rc.atom37_to_atom14[r][a], k);
      EXPECT_EQ(rc.atom37_mask[r][a], 1.0f);
    }
  }
}

// Frames of present groups are proper rotations; the chi frames AF2 leaves empty are zero.
TEST(ResidueConstants, DefaultFramesAreRotationsOrZero) {
  const ResidueConstants& rc = residue_constants();
  for (int r = 0; r < kNumRestypesWithX; ++r) {
    for (int g = 0; g < kNumRigidGroups; ++g) {
      const Rigid f = rc.default_frame(r, g);
      const bool present = r < kNumRestypes && (g < 4 || rc.chi_angles_mask[r][g - 4] != 0);
      const std::string what = std::string(rc.resnames[r]) + " group " + std::to_string(g);
      if (present) {
        expect_proper_rotation(f.rot, 1e-6, what);
      } else {
        EXPECT_EQ(f.rot.cwiseAbs().maxCoeff(), 0.0f) << what;
        EXPECT_EQ(f.trans.cwiseAbs().maxCoeff(), 0.0f) << what;
      }
    }
    if (r == kNumRestypes) continue;
    // The psi frame sits on C, the chi1 frame on the chi1 axis-end atom (CB).
    const int c_slot = 2, cb_slot = 4;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(rc.rigid_group_default_frame[r][3][d][3],
                rc.atom14_rigid_group_positions[r][c_slot][d]);
      if (rc.chi_angles_mask[r][0] != 0) {
        EXPECT_FLOAT_EQ(rc.rigid_group_default_frame[r][4][d][3],
                        rc.atom14_rigid_group_positions[r][cb_slot][d]);
      }
    }
  }
}

class AtomBuilderGeometry : public ::testing::Test {
 protected:
  // The reference's final backbone frames and angles, built into atoms.
  void build(const Rigid& global = Rigid::identity()) {
    const Hdf5TensorReader ref(tiny_reference("model_1_ptm_r24_c8_e16_t2_rec3_s0.h5"));
    const Shape s = ref.shape("inputs/aatype");
    n_res_ = s[0];
    const std::vector<float> a = ref.read_f32("inputs/aatype");
    aatype_.resize(static_cast<std::size_t>(n_res_));
    for (std::int64_t i = 0; i < n_res_; ++i) {
      aatype_[static_cast<std::size_t>(i)] =
          static_cast<std::int64_t>(a[static_cast<std::size_t>(i * s[1])]);
    }
    const std::vector<float> affine = ref.read_f32("outputs/final_affine_tensor");
    angles_ = ref.read_f32("outputs/sm/angles");  // [8, N, 7, 2]; the last layer is final
    std::vector<Rigid> bb(static_cast<std::size_t>(n_res_));
    for (std::int64_t i = 0; i < n_res_; ++i) {
      bb[static_cast<std::size_t>(i)] = global.compose(Rigid::from_tensor_7(affine.data() + i * 7));
    }
    const Tensor angles(angles_.data() + 7 * n_res_ * 14, DType::f32, Shape{n_res_, 7, 2});
    const Tensor aatype(aatype_.data(), DType::i64, Shape{n_res_});
    frames_.resize(static_cast<std::size_t>(n_res_ * kNumRigidGroups));
    torsion_angles_to_frames(bb, angles, aatype, frames_);
    atom14_.assign(static_cast<std::size_t>(n_res_ * 14 * 3), 0.0f);
    frames_to_atom14_positions(frames_, aatype,
                               Tensor(atom14_.data(), DType::f32, Shape{n_res_, 14, 3}));
  }
  Vec3 atom(std::int64_t i, int slot) const {
    return Eigen::Map<const Vec3>(atom14_.data() + (i * 14 + slot) * 3);
  }

  std::int64_t n_res_ = 0;
  std::vector<std::int64_t> aatype_;
  std::vector<float> angles_, atom14_;
  std::vector<Rigid> frames_;
};

// Engh & Huber (1991) ideal lengths, the literature AF2's rigid-group positions come from;
// atom14 slots N 0, CA 1, C 2, O 3, CB 4.
TEST_F(AtomBuilderGeometry, IntraResidueBondsAreIdeal) {
  build();
  const int gly = restype_index('G'), pro = restype_index('P'), ala = restype_index('A');
  double worst = 0;
  for (std::int64_t i = 0; i < n_res_; ++i) {
    const int r = static_cast<int>(aatype_[static_cast<std::size_t>(i)]);
    const char letter = kRestypeLetters[static_cast<std::size_t>(r)];
    const double n_ca = r == gly ? 1.451 : r == pro ? 1.466 : 1.458;
    const double ca_c = r == gly ? 1.516 : 1.525;
    const double ca_cb = r == ala                                            ? 1.521
                         : (letter == 'I' || letter == 'V' || letter == 'T') ? 1.540
                                                                             : 1.530;
    const auto check = [&](int a, int b, double ideal, const char* bond) {
      const double d = (atom(i, a) - atom(i, b)).norm();
      worst = std::max(worst, std::fabs(d - ideal));
      EXPECT_NEAR(d, ideal, 0.01) << bond << " of residue " << i << " (" << letter << ")";
    };
    check(0, 1, n_ca, "N-CA");
    check(1, 2, ca_c, "CA-C");
    check(2, 3, 1.231, "C=O");
    if (r != gly) check(1, 4, ca_cb, "CA-CB");
  }
  std::cout << "max |bond - ideal| " << worst << " Å\n";
}

// Moving every backbone frame by one rigid motion moves every atom by it (Alg. 24 is
// equivariant), and each sidechain frame stays a proper rotation.
TEST_F(AtomBuilderGeometry, BuilderIsEquivariantAndFramesAreRotations) {
  build();
  const std::vector<float> plain = atom14_;
  for (std::int64_t i = 0; i < n_res_; ++i) {
    const int r = static_cast<int>(aatype_[static_cast<std::size_t>(i)]);
    for (int g = 0; g < kNumRigidGroups; ++g) {
      const bool present = g < 4 || residue_constants().chi_angles_mask[r][g - 4] != 0;
      if (present) {
        expect_proper_rotation(frames_[static_cast<std::size_t>(i * 8 + g)].rot, 1e-5,
                               "residue " + std::to_string(i) + " group " + std::to_string(g));
      }
    }
  }
  std::mt19937 rng(6);
  const Rigid motion = random_rigid(rng);
  build(motion);
  for (std::int64_t i = 0; i < n_res_; ++i) {
    for (int k = 0; k < kNumAtom14; ++k) {
      const int r = static_cast<int>(aatype_[static_cast<std::size_t>(i)]);
      if (residue_constants().atom14_mask[r][k] == 0) continue;
      const Vec3 expected = motion.apply(Eigen::Map<const Vec3>(plain.data() + (i * 14 + k) * 3));
      EXPECT_LT((atom(i, k) - expected).norm(), 1e-3) << i << ", " << k;
    }
  }
}

// For every amino acid (the reference sequence lacks D, G, K, F, P): build one residue from a
// random backbone frame and random torsions, then read each chi back from the atoms the way
// AF2 measures torsions (frame from the first three chi atoms, (sin, cos) = (z, y) of the
// fourth). This checks the chi frames, atom names and group assignments of all 20 tables.
TEST(AtomBuilder, ChiAnglesRoundTripForEveryRestype) {
  const ResidueConstants& rc = residue_constants();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> angle(-3.14159f, 3.14159f);
  for (int r = 0; r < kNumRestypes; ++r) {
    std::int64_t aatype_value = r;
    const Tensor aatype(&aatype_value, DType::i64, Shape{1});
    float angles[kNumTorsions][2];
    for (auto& a : angles) {
      const float t = angle(rng);
      a[0] = std::sin(t);
      a[1] = std::cos(t);
    }
    const Rigid bb[1] = {random_rigid(rng)};
    std::vector<Rigid> frames(kNumRigidGroups);
    torsion_angles_to_frames(bb, Tensor(&angles[0][0], DType::f32, Shape{1, 7, 2}), aatype, frames);
    float atoms[kNumAtom14][3];
    frames_to_atom14_positions(frames, aatype, Tensor(&atoms[0][0], DType::f32, Shape{1, 14, 3}));
    const auto pos = [&](std::string_view name) {
      for (int k = 0; k < kNumAtom14; ++k) {
        if (rc.atom14_names[r][k] == name) return Vec3(atoms[k][0], atoms[k][1], atoms[k][2]);
      }
      ADD_FAILURE() << rc.resnames[r] << " has no atom " << name;
      return Vec3(Vec3::Zero());
    };
    for (int c = 0; c < kNumChis; ++c) {
      const auto& chi = rc.chi_angles_atoms[r][c];
      if (rc.chi_angles_mask[r][c] == 0) {
        EXPECT_TRUE(chi[0].empty());
        continue;
      }
      const Rigid f = Rigid::from_3_points(pos(chi[0]), pos(chi[1]), pos(chi[2]));
      const Vec3 d = f.apply_inverse(pos(chi[3]));
      const float norm = std::hypot(d[1], d[2]);
      EXPECT_NEAR(d[2] / norm, angles[3 + c][0], 1e-4) << rc.resnames[r] << " chi" << c + 1;
      EXPECT_NEAR(d[1] / norm, angles[3 + c][1], 1e-4) << rc.resnames[r] << " chi" << c + 1;
    }
    // The backbone atoms sit where the backbone frame puts the literature positions.
    EXPECT_LT((pos("CA") - bb[0].trans).norm(), 1e-5) << rc.resnames[r];
  }
}

// An unknown residue (X) has no atoms: AF2 masks all of them and its atom37 mask is zero.
TEST(AtomBuilder, UnknownResidueHasNoAtoms) {
  std::int64_t x = kUnknownRestypeIndex;
  const Tensor aatype(&x, DType::i64, Shape{1});
  float angles[kNumTorsions][2] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}};
  std::mt19937 rng(8);
  const Rigid bb[1] = {random_rigid(rng)};
  std::vector<Rigid> frames(kNumRigidGroups);
  torsion_angles_to_frames(bb, Tensor(&angles[0][0], DType::f32, Shape{1, 7, 2}), aatype, frames);
  std::vector<float> atom14(14 * 3, 1.0f), atom37(37 * 3, 1.0f), mask37(37, 1.0f);
  const Tensor atom14_t(atom14.data(), DType::f32, Shape{1, 14, 3});
  frames_to_atom14_positions(frames, aatype, atom14_t);
  atom14_to_atom37(atom14_t, aatype, Tensor(atom37.data(), DType::f32, Shape{1, 37, 3}),
                   Tensor(mask37.data(), DType::f32, Shape{1, 37}));
  for (float v : atom14) EXPECT_EQ(v, 0.0f);
  for (float v : atom37) EXPECT_EQ(v, 0.0f);
  for (float v : mask37) EXPECT_EQ(v, 0.0f);
  // Out-of-range residue types are the user's input error.
  std::int64_t bad = 21;
  EXPECT_THROW(frames_to_atom14_positions(frames, Tensor(&bad, DType::i64, Shape{1}), atom14_t),
               InputError);
}

}  // namespace
}  // namespace cpufold::testing
