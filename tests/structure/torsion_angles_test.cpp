// Torsion angles from atom positions (structure/torsion_angles) on ideal geometry, independent
// of the reference: known dihedrals, an ideal backbone chain built with given phi / psi /
// omega, and side chains built by the atom builder from given chi angles, read back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "memory/error.h"
#include "structure/atom_builder.h"
#include "structure/residue_constants.h"
#include "structure/rigid.h"
#include "structure/torsion_angles.h"

namespace cpufold {
namespace {

using Vec3d = Eigen::Vector3d;
constexpr double kPi = std::numbers::pi;
constexpr double kTol = 1e-5;

// The IUPAC dihedral a-b-c-d in double precision (atan2 of the two plane normals), independent
// of the frame construction under test.
double dihedral(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
  const Vec3d b1 = b - a, b2 = c - b, b3 = d - c;
  return std::atan2(b2.norm() * b1.dot(b2.cross(b3)), b1.cross(b2).dot(b2.cross(b3)));
}

// Places d with |cd| = length, angle b-c-d = angle and dihedral a-b-c-d = torsion (NeRF).
Vec3d place(const Vec3d& a, const Vec3d& b, const Vec3d& c, double length, double angle,
            double torsion) {
  const Vec3d bc = (c - b).normalized();
  const Vec3d n = (b - a).cross(bc).normalized();
  const Vec3d m = n.cross(bc);
  const Vec3d local(-length * std::cos(angle), length * std::sin(angle) * std::cos(torsion),
                    length * std::sin(angle) * std::sin(torsion));
  return c + bc * local.x() + m * local.y() + n * local.z();
}

double deg(double d) {
  return d * kPi / 180;
}

std::array<float, 3> to_f(const Vec3d& v) {
  return {static_cast<float>(v.x()), static_cast<float>(v.y()), static_cast<float>(v.z())};
}

void expect_angle(const float* sin_cos, double angle, const std::string& what) {
  EXPECT_NEAR(sin_cos[0], std::sin(angle), kTol) << what;
  EXPECT_NEAR(sin_cos[1], std::cos(angle), kTol) << what;
}

TEST(TorsionSinCos, KnownDihedralsInAnyFrame) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int step = -12; step <= 12; ++step) {
    const double theta = step * kPi / 12;
    // b at the origin, c on +x, a in the xy plane (+y), d turned by theta about b -> c.
    Vec3d p[4] = {{-0.5, 1.0, 0.0},
                  {0.0, 0.0, 0.0},
                  {1.5, 0.0, 0.0},
                  {2.0, 1.3 * std::cos(theta), 1.3 * std::sin(theta)}};
    EXPECT_NEAR(std::remainder(dihedral(p[0], p[1], p[2], p[3]) - theta, 2 * kPi), 0, 1e-12);
    // Any rigid motion leaves the torsion alone.
    const Eigen::Quaterniond q(n(rng), n(rng), n(rng), n(rng));
    const Vec3d t(10 * n(rng), 10 * n(rng), 10 * n(rng));
    std::array<float, 3> f[4];
    for (int k = 0; k < 4; ++k) f[k] = to_f(q.normalized() * p[k] + t);
    const auto sc = torsion_sin_cos(f[0].data(), f[1].data(), f[2].data(), f[3].data());
    expect_angle(sc.data(), theta, "theta = " + std::to_string(theta));
  }
}

TEST(TorsionSinCos, DegenerateAtomsGiveZeroNotNan) {
  // AF2's absent chis use atom N four times; the eps in the frame makes that (0, 0).
  const float p[3] = {1.f, 2.f, 3.f};
  const auto sc = torsion_sin_cos(p, p, p, p);
  EXPECT_EQ(sc[0], 0.f);
  EXPECT_EQ(sc[1], 0.f);
  const float zero[3] = {};
  const auto z = torsion_sin_cos(zero, zero, p, zero);  // a zero "previous residue"
  EXPECT_FALSE(std::isnan(z[0]) || std::isnan(z[1]));
}

// An ideal backbone (Engh & Huber lengths and angles) with given phi, psi and omega.
struct Chain {
  std::vector<std::int64_t> aatype;
  std::vector<float> positions, mask;  // [n, 37, 3], [n, 37]
  std::vector<double> phi, psi, omega;
};

Chain ideal_chain(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  Chain c;
  c.aatype.assign(static_cast<std::size_t>(n), restype_index('G'));
  c.positions.assign(static_cast<std::size_t>(n * kNumAtom37 * 3), 0.f);
  c.mask.assign(static_cast<std::size_t>(n * kNumAtom37), 0.f);
  for (std::int64_t i = 0; i < n; ++i) {
    c.phi.push_back(angle(rng));
    c.psi.push_back(angle(rng));
    c.omega.push_back(i % 3 == 2 ? deg(5) : deg(179));  // trans, and an occasional cis
  }
  std::vector<Vec3d> N(n), CA(n), C(n), O(n);
  N[0] = {0, 0, 0};
  CA[0] = {1.458, 0, 0};
  C[0] = CA[0] + 1.525 * Vec3d(-std::cos(deg(111)), std::sin(deg(111)), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) {
      N[i] = place(N[i - 1], CA[i - 1], C[i - 1], 1.329, deg(116.2), c.psi[i - 1]);
      CA[i] = place(CA[i - 1], C[i - 1], N[i], 1.458, deg(121.7), c.omega[i]);
      C[i] = place(C[i - 1], N[i], CA[i], 1.525, deg(111), c.phi[i]);
    }
    O[i] = place(N[i], CA[i], C[i], 1.231, deg(120.5), c.psi[i] + kPi);
  }
  const int ids[4] = {atom37_index("N"), atom37_index("CA"), atom37_index("C"), atom37_index("O")};
  for (std::int64_t i = 0; i < n; ++i) {
    const Vec3d* atoms[4] = {&N[i], &CA[i], &C[i], &O[i]};
    for (int k = 0; k < 4; ++k) {
      const auto f = to_f(*atoms[k]);
      std::copy(f.begin(), f.end(), c.positions.begin() + (i * kNumAtom37 + ids[k]) * 3);
      c.mask[static_cast<std::size_t>(i * kNumAtom37 + ids[k])] = 1.f;
    }
  }
  // The chain builder itself: its dihedrals are the ones asked for.
  for (std::int64_t i = 1; i < n; ++i) {
    EXPECT_NEAR(std::remainder(dihedral(C[i - 1], N[i], CA[i], C[i]) - c.phi[i], 2 * kPi), 0, 1e-9);
  }
  return c;
}

struct Torsions {
  std::vector<float> sin_cos, alt, mask;
  explicit Torsions(std::int64_t n)
      : sin_cos(static_cast<std::size_t>(n * 14)),
        alt(static_cast<std::size_t>(n * 14)),
        mask(static_cast<std::size_t>(n * 7)) {}
};

Torsions run(std::vector<std::int64_t>& aatype, std::vector<float>& positions,
             std::vector<float>& mask) {
  const auto n = static_cast<std::int64_t>(aatype.size());
  Torsions t(n);
  atom37_to_torsion_angles(Tensor(aatype.data(), DType::i64, {n}),
                           Tensor(positions.data(), DType::f32, {n, kNumAtom37, 3}),
                           Tensor(mask.data(), DType::f32, {n, kNumAtom37}),
                           Tensor(t.sin_cos.data(), DType::f32, {n, 7, 2}),
                           Tensor(t.alt.data(), DType::f32, {n, 7, 2}),
                           Tensor(t.mask.data(), DType::f32, {n, 7}));
  return t;
}

TEST(Atom37ToTorsionAngles, IdealBackboneGivesItsOmegaPhiPsi) {
  std::mt19937 rng(5);
  Chain c = ideal_chain(9, rng);
  const Torsions t = run(c.aatype, c.positions, c.mask);
  for (std::int64_t i = 0; i < 9; ++i) {
    const std::string at = " at residue " + std::to_string(i);
    const float* m = t.mask.data() + i * 7;
    // The first residue has no previous one: pre-omega and phi are masked.
    EXPECT_EQ(m[0], i > 0 ? 1.f : 0.f) << at;
    EXPECT_EQ(m[1], i > 0 ? 1.f : 0.f) << at;
    EXPECT_EQ(m[2], 1.f) << at;
    for (int k = 3; k < 7; ++k) EXPECT_EQ(m[k], 0.f) << "glycine has no chi" << at;
    if (i > 0) {
      expect_angle(t.sin_cos.data() + i * 14 + 0, c.omega[static_cast<std::size_t>(i)],
                   "pre-omega" + at);
      expect_angle(t.sin_cos.data() + i * 14 + 2, c.phi[static_cast<std::size_t>(i)], "phi" + at);
    }
    expect_angle(t.sin_cos.data() + i * 14 + 4, c.psi[static_cast<std::size_t>(i)], "psi" + at);
    for (int k = 0; k < 14; ++k) EXPECT_EQ(t.alt[i * 14 + k], t.sin_cos[i * 14 + k]) << at;
  }
}

TEST(Atom37ToTorsionAngles, MissingBackboneAtomsMaskTheirTorsions) {
  std::mt19937 rng(6);
  Chain c = ideal_chain(4, rng);
  c.mask[static_cast<std::size_t>(1 * kNumAtom37 + atom37_index("C"))] = 0.f;  // residue 1's C
  const Torsions t = run(c.aatype, c.positions, c.mask);
  const float* m1 = t.mask.data() + 7;
  const float* m2 = t.mask.data() + 14;
  EXPECT_EQ(m1[0], 1.f);  // pre-omega: CA, C of residue 0, N, CA of residue 1
  EXPECT_EQ(m1[1], 0.f);  // phi needs residue 1's C
  EXPECT_EQ(m1[2], 0.f);  // psi too
  EXPECT_EQ(m2[0], 0.f);  // residue 2's pre-omega needs the previous C
  EXPECT_EQ(m2[1], 0.f);
  EXPECT_EQ(m2[2], 1.f);
}

// Every residue type: atoms built by the atom builder (AF2 Alg. 24) from chosen torsions,
// read back by atom37_to_torsion_angles.
TEST(Atom37ToTorsionAngles, SideChainsBuiltFromChisGiveTheirChis) {
  const ResidueConstants& rc = residue_constants();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> angle(-3.1f, 3.1f);
  const std::int64_t n = kNumRestypes;
  std::vector<std::int64_t> aatype(static_cast<std::size_t>(n));
  std::vector<float> angles(static_cast<std::size_t>(n * 14));
  for (std::int64_t r = 0; r < n; ++r) {
    aatype[static_cast<std::size_t>(r)] = r;
    for (int k = 0; k < 7; ++k) {
      const float a = angle(rng);
      angles[static_cast<std::size_t>(r * 14 + 2 * k)] = std::sin(a);
      angles[static_cast<std::size_t>(r * 14 + 2 * k + 1)] = std::cos(a);
    }
  }
  // Every residue in the identity backbone frame (near the origin, so fp32 positions keep
  // ~1e-7 Å; overlapping residues do not matter, only pre-omega and phi, not checked here, look
  // at a neighbour).
  const std::vector<Rigid> backbone(static_cast<std::size_t>(n));
  const Tensor aatype_t(aatype.data(), DType::i64, {n});
  std::vector<Rigid> frames(static_cast<std::size_t>(n * kNumRigidGroups));
  torsion_angles_to_frames(backbone, Tensor(angles.data(), DType::f32, {n, 7, 2}), aatype_t,
                           frames);
  std::vector<float> atom14(static_cast<std::size_t>(n * 14 * 3));
  std::vector<float> positions(static_cast<std::size_t>(n * kNumAtom37 * 3));
  std::vector<float> mask(static_cast<std::size_t>(n * kNumAtom37));
  const Tensor atom14_t(atom14.data(), DType::f32, {n, 14, 3});
  frames_to_atom14_positions(frames, aatype_t, atom14_t);
  atom14_to_atom37(atom14_t, aatype_t, Tensor(positions.data(), DType::f32, {n, kNumAtom37, 3}),
                   Tensor(mask.data(), DType::f32, {n, kNumAtom37}));

  const Torsions t = run(aatype, positions, mask);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::string res(rc.resnames[static_cast<std::size_t>(r)]);
    const float* want = angles.data() + r * 14;
    EXPECT_NEAR(t.sin_cos[r * 14 + 4], want[4], kTol) << res << " psi";
    EXPECT_NEAR(t.sin_cos[r * 14 + 5], want[5], kTol) << res << " psi";
    for (int c = 0; c < kNumChis; ++c) {
      const std::string what = res + " chi" + std::to_string(c + 1);
      const float* got = t.sin_cos.data() + r * 14 + 6 + 2 * c;
      const float* alt = t.alt.data() + r * 14 + 6 + 2 * c;
      EXPECT_EQ(t.mask[r * 7 + 3 + c], rc.chi_angles_mask[r][c]) << what;
      if (rc.chi_angles_mask[r][c] == 0) {
        EXPECT_EQ(got[0], 0.f) << what;
        EXPECT_EQ(got[1], 0.f) << what;
        continue;
      }
      EXPECT_NEAR(got[0], want[6 + 2 * c], kTol) << what;
      EXPECT_NEAR(got[1], want[7 + 2 * c], kTol) << what;
      // The alternative angle is turned by 180° for π-periodic chis (ASP, GLU, PHE, TYR).
      const float flip = rc.chi_pi_periodic[r][c] != 0 ? -1.f : 1.f;
      EXPECT_EQ(alt[0], flip * got[0]) << what;
      EXPECT_EQ(alt[1], flip * got[1]) << what;
    }
  }

  // Without CG every ARG chi is masked: each of the four is defined with CG.
  const int arg = restype_index('R');
  mask[static_cast<std::size_t>(arg * kNumAtom37 + atom37_index("CG"))] = 0.f;
  const Torsions no_cg = run(aatype, positions, mask);
  for (int c = 0; c < kNumChis; ++c) EXPECT_EQ(no_cg.mask[arg * 7 + 3 + c], 0.f) << c;
}

TEST(Atom37ToTorsionAngles, GapAndUnknownHaveNoChis) {
  std::mt19937 rng(9);
  Chain c = ideal_chain(3, rng);
  c.aatype = {20, 21, 20};                       // X, gap (counted as X), X
  std::fill(c.mask.begin(), c.mask.end(), 1.f);  // even with every atom "present"
  const Torsions t = run(c.aatype, c.positions, c.mask);
  for (std::int64_t i = 0; i < 3; ++i) {
    for (int k = 3; k < 7; ++k) {
      EXPECT_EQ(t.mask[i * 7 + k], 0.f);
      EXPECT_EQ(t.sin_cos[i * 14 + 2 * k], 0.f);
      EXPECT_EQ(t.sin_cos[i * 14 + 2 * k + 1], 0.f);
    }
    expect_angle(t.sin_cos.data() + i * 14 + 4, c.psi[static_cast<std::size_t>(i)], "psi");
  }
}

TEST(Atom37ToTorsionAngles, ShapeMismatchIsAnInternalError) {
  std::vector<std::int64_t> aatype(2, 0);
  std::vector<float> positions(2 * kNumAtom37 * 3), mask(2 * kNumAtom37), out(2 * 14),
      out_mask(2 * 6);
  EXPECT_THROW(atom37_to_torsion_angles(Tensor(aatype.data(), DType::i64, {2}),
                                        Tensor(positions.data(), DType::f32, {2, kNumAtom37, 3}),
                                        Tensor(mask.data(), DType::f32, {2, kNumAtom37}),
                                        Tensor(out.data(), DType::f32, {2, 7, 2}),
                                        Tensor(out.data(), DType::f32, {2, 7, 2}),
                                        Tensor(out_mask.data(), DType::f32, {2, 6})),
               InternalError);
}

}  // namespace
}  // namespace cpufold
