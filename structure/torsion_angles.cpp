#include "structure/torsion_angles.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "memory/error.h"
#include "structure/residue_constants.h"

// Compiled with -ffp-contract=off (structure/CMakeLists.txt): no fused multiply-adds, so the
// float operations below round exactly as OpenFold's elementwise tensor ops do.

namespace cpufold {
namespace {

constexpr float kEps = 1e-8f;  // OpenFold Rigid.from_3_points and the sin/cos normalisation

// AF2 get_chi_atom_indices: atom37 indices of each chi's 4 atoms, [0, 0, 0, 0] for absent
// chis and for X.
struct ChiAtomIndices {
  int index[kNumRestypesWithX][kNumChis][4]{};
};

const ChiAtomIndices& chi_atom_indices() {
  static const ChiAtomIndices table = [] {
    ChiAtomIndices t;
    const ResidueConstants& rc = residue_constants();
    for (int r = 0; r < kNumRestypesWithX; ++r) {
      for (int c = 0; c < kNumChis; ++c) {
        for (int a = 0; a < 4; ++a) {
          const std::string_view name = rc.chi_angles_atoms[r][c][a];
          t.index[r][c][a] = name.empty() ? 0 : atom37_index(name);
        }
      }
    }
    return t;
  }();
  return table;
}

void expect(const Tensor& t, DType dtype, const Shape& shape, const char* what) {
  if (t.empty() || t.dtype() != dtype || !(t.shape() == shape) || !t.is_contiguous()) {
    throw InternalError(std::string("atom37_to_torsion_angles: ") + what + " is " +
                        (t.empty() ? std::string("(missing)") : t.describe()) + ", expected " +
                        std::string(dtype_name(dtype)) + shape.str() + " (contiguous)");
  }
}

std::int64_t aatype_at(const Tensor& aatype, std::int64_t i) {
  const std::int64_t offset = i * aatype.stride(0);
  return aatype.dtype() == DType::i64 ? static_cast<const std::int64_t*>(aatype.data())[offset]
                                      : static_cast<const std::int32_t*>(aatype.data())[offset];
}

// a·p as OpenFold's rot_vec_mul sums it: (x + y) + z.
float dot3(const float* a, const float* p) {
  return (a[0] * p[0] + a[1] * p[1]) + a[2] * p[2];
}

}  // namespace

// AF2 Alg. 21 (rigidFrom3Points) frame, then the 4th atom in it (all_atom.py).
std::array<float, 2> torsion_sin_cos(const float* a0, const float* a1, const float* a2,
                                     const float* a3) {
  // Frame: origin a2, e0 = unit(a2 - a1), e1 = unit(part of a0 - a2 orthogonal to e0).
  float e0[3], e1[3], e2[3];
  for (int k = 0; k < 3; ++k) {
    e0[k] = a2[k] - a1[k];
    e1[k] = a0[k] - a2[k];
  }
  const float n0 = std::sqrt(dot3(e0, e0) + kEps);
  for (float& v : e0) v /= n0;
  const float d = dot3(e0, e1);
  for (int k = 0; k < 3; ++k) e1[k] -= e0[k] * d;
  const float n1 = std::sqrt(dot3(e1, e1) + kEps);
  for (float& v : e1) v /= n1;
  e2[0] = e0[1] * e1[2] - e0[2] * e1[1];
  e2[1] = e0[2] * e1[0] - e0[0] * e1[2];
  e2[2] = e0[0] * e1[1] - e0[1] * e1[0];
  // The inverse frame applied to a3: Rᵀ·a3 + (-(Rᵀ·a2)), as Rigid.invert().apply computes it.
  const float y = dot3(e1, a3) + -dot3(e1, a2);
  const float z = dot3(e2, a3) + -dot3(e2, a2);
  const float norm = std::sqrt((z * z + y * y) + kEps);
  return {z / norm, y / norm};
}

namespace {

// InternalError unless the tensors are those of n_res residues; n_res.
std::int64_t check_torsion_inputs(const Tensor& aatype, const Tensor& positions,
                                  const Tensor& atom_mask, const Tensor& sin_cos,
                                  const Tensor& alt_sin_cos, const Tensor& torsion_mask) {
  if (aatype.empty() || aatype.rank() != 1 ||
      (aatype.dtype() != DType::i64 && aatype.dtype() != DType::i32)) {
    throw InternalError("atom37_to_torsion_angles: aatype must be i64 or i32 [n_res], got " +
                        (aatype.empty() ? std::string("(missing)") : aatype.describe()));
  }
  const std::int64_t n_res = aatype.dim(0);
  expect(positions, DType::f32, {n_res, kNumAtom37, 3}, "positions");
  expect(atom_mask, DType::f32, {n_res, kNumAtom37}, "atom_mask");
  expect(sin_cos, DType::f32, {n_res, kNumTorsions, 2}, "sin_cos");
  expect(alt_sin_cos, DType::f32, {n_res, kNumTorsions, 2}, "alt_sin_cos");
  expect(torsion_mask, DType::f32, {n_res, kNumTorsions}, "torsion_mask");
  return n_res;
}

// One residue of restype r: its atoms x and mask m, the previous residue's px and pm. The four
// atoms of each torsion into quads and the torsion's mask into t_mask.
void torsion_atoms(int r, const float* x, const float* m, const float* px, const float* pm,
                   const float* (&quads)[kNumTorsions][4], float* t_mask) {
  constexpr int kN = 0, kCA = 1, kC = 2, kO = 4;
  const ResidueConstants& rc = residue_constants();
  const ChiAtomIndices& chis = chi_atom_indices();
  auto atom = [](const float* base, int a) { return base + a * 3; };
  const float* backbone[3][4] = {
      {atom(px, kCA), atom(px, kC), atom(x, kN), atom(x, kCA)},  // pre-omega
      {atom(px, kC), atom(x, kN), atom(x, kCA), atom(x, kC)},    // phi
      {atom(x, kN), atom(x, kCA), atom(x, kC), atom(x, kO)},     // psi (from O)
  };
  for (int t = 0; t < 3; ++t) {
    for (int a = 0; a < 4; ++a) quads[t][a] = backbone[t][a];
  }
  t_mask[0] = (pm[kCA] * pm[kC]) * (m[kN] * m[kCA]);
  t_mask[1] = pm[kC] * ((m[kN] * m[kCA]) * m[kC]);
  t_mask[2] = ((m[kN] * m[kCA]) * m[kC]) * m[kO];
  for (int c = 0; c < kNumChis; ++c) {
    const int* idx = chis.index[r][c];
    for (int a = 0; a < 4; ++a) quads[3 + c][a] = atom(x, idx[a]);
    t_mask[3 + c] = rc.chi_angles_mask[r][c] * (((m[idx[0]] * m[idx[1]]) * m[idx[2]]) * m[idx[3]]);
  }
}

}  // namespace

void atom37_to_torsion_angles(const Tensor& aatype, const Tensor& positions,
                              const Tensor& atom_mask, const Tensor& sin_cos,
                              const Tensor& alt_sin_cos, const Tensor& torsion_mask) {
  const std::int64_t n_res =
      check_torsion_inputs(aatype, positions, atom_mask, sin_cos, alt_sin_cos, torsion_mask);
  const ResidueConstants& rc = residue_constants();
  const float* pos = positions.data_as<float>();
  const float* mask = atom_mask.data_as<float>();
  float* sc = sin_cos.data_as<float>();
  float* alt = alt_sin_cos.data_as<float>();
  float* tm = torsion_mask.data_as<float>();
  const float zero_atoms[kNumAtom37 * 3] = {};
  const float zero_mask[kNumAtom37] = {};

  for (std::int64_t i = 0; i < n_res; ++i) {
    const std::int64_t aa = aatype_at(aatype, i);
    if (aa < 0) {
      throw InternalError("atom37_to_torsion_angles: negative aatype " + std::to_string(aa) +
                          " at residue " + std::to_string(i));
    }
    const int r = static_cast<int>(std::min<std::int64_t>(aa, kUnknownRestypeIndex));
    const float* x = pos + i * kNumAtom37 * 3;
    const float* m = mask + i * kNumAtom37;
    // AF2 pads the chain with one all-zero residue in front.
    const float* quads[kNumTorsions][4];
    torsion_atoms(r, x, m, i > 0 ? x - kNumAtom37 * 3 : zero_atoms,
                  i > 0 ? m - kNumAtom37 : zero_mask, quads, tm + i * kNumTorsions);

    float* s = sc + i * kNumTorsions * 2;
    float* s_alt = alt + i * kNumTorsions * 2;
    for (int t = 0; t < kNumTorsions; ++t) {
      std::array<float, 2> v = torsion_sin_cos(quads[t][0], quads[t][1], quads[t][2], quads[t][3]);
      if (t == 2) v = {-v[0], -v[1]};  // psi: O sits opposite the next residue's N
      const float mirror = t < 3 ? 1.f : 1.f - 2.f * rc.chi_pi_periodic[r][t - 3];
      s[2 * t] = v[0];
      s[2 * t + 1] = v[1];
      s_alt[2 * t] = v[0] * mirror;
      s_alt[2 * t + 1] = v[1] * mirror;
    }
  }
}

}  // namespace cpufold
