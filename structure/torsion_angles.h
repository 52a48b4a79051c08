// Torsion angles from atom positions: AF2 all_atom.atom37_to_torsion_angles (OpenFold
// data_transforms.atom37_to_torsion_angles), used for the template torsion-angle features.
// The 7 torsions are pre-omega, phi, psi, chi1..chi4, as the rigid groups 1..7 of AF2
// supplement 1.8.1, Table 2.
#pragma once

#include <array>

#include "memory/tensor.h"

namespace cpufold {

// (sin, cos) of the torsion about the a1 -> a2 bond of the dihedral a0-a1-a2-a3 (the IUPAC
// dihedral angle), as AF2 computes it: a frame from 3 points (AF2 Alg. 21, Gram-Schmidt with
// eps = 1e-8: origin a2, a1 on the negative x axis, a0 in the xy plane), a3 mapped into it,
// and (z, y) / sqrt(z² + y² + 1e-8). Degenerate inputs (coincident atoms, e.g. the zero
// "previous residue" of the first residue) give AF2's numbers, not NaN; the float operations
// follow OpenFold's order, so even those match the reference bit for bit.
// Each point is 3 floats (Å).
std::array<float, 2> torsion_sin_cos(const float* a0, const float* a1, const float* a2,
                                     const float* a3);

// AF2 all_atom.atom37_to_torsion_angles (placeholder_for_undefined = False, as AF2's template
// embedding runs it with zero_init) for one chain:
//   aatype:       i64 or i32 [n_res], AF2 restype order; values above 20 (the gap, 21) count
//                 as X (no chis), as AF2 and OpenFold clamp them.
//   positions:    f32 [n_res, 37, 3] Å (contiguous).
//   atom_mask:    f32 [n_res, 37] (contiguous).
//   sin_cos:      f32 [n_res, 7, 2] out (contiguous): pre-omega from CA, C of the previous
//                 residue and N, CA; phi from C(prev), N, CA, C; psi from N, CA, C, O, turned by
//                 180° (AF2 uses O in place of the next residue's N); chi1..4 from the chi atom
//                 table (absent chis use atom N four times and give (0, 0)). The first residue's
//                 previous residue is all zero positions and mask, so its pre-omega and phi are
//                 masked but their (sin, cos) are whatever the degenerate frame gives (AF2 keeps
//                 them: they feed the template torsion rows).
//   alt_sin_cos:  f32 [n_res, 7, 2] out: sin_cos with the chis that are π-periodic
//                 (chi_pi_periodic) turned by 180°.
//   torsion_mask: f32 [n_res, 7] out: the product of the defining atoms' masks, times
//                 chi_angles_mask for the chis.
// Throws InternalError on a shape or dtype mismatch.
void atom37_to_torsion_angles(const Tensor& aatype, const Tensor& positions,
                              const Tensor& atom_mask, const Tensor& sin_cos,
                              const Tensor& alt_sin_cos, const Tensor& torsion_mask);

}  // namespace cpufold
