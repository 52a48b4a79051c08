// From backbone frames and torsion angles to all heavy atoms: AF2 Alg. 24
// (computeAllAtomCoordinates) as OpenFold's feats.torsion_angles_to_frames and
// frames_and_literature_positions_to_atom14_pos do it, plus the atom14 -> atom37 scatter AF2
// uses for final_atom_positions. Pure geometry in fp32; the tables are residue_constants().
#pragma once

#include <span>

#include "memory/tensor.h"
#include "structure/rigid.h"

namespace cpufold {

// AF2 Alg. 24 lines 1-10: the 8 rigid-group frames of every residue, in global coordinates.
// backbone: [n_res] backbone frames (translation in Å, i.e. already × trans_scale_factor).
// angles:   f32 [n_res, 7, 2] (sin, cos) of pre-omega, phi, psi, chi1..chi4, normalised
//           (any strides).
// aatype:   i64 or i32 [n_res], each in [0, 21) (InputError otherwise).
// dst:      [n_res * 8] frames, group g of residue i at dst[8·i + g]; these are AF2's
//           sidechain_frames (groups of absent chis and of X have a zero rotation, as in AF2).
void torsion_angles_to_frames(std::span<const Rigid> backbone, const Tensor& angles,
                              const Tensor& aatype, std::span<Rigid> dst);

// AF2 Alg. 24 line 11 (frames_and_literature_positions_to_atom14_pos): each atom's literature
// position mapped by its rigid group's frame, times the atom14 existence mask.
// frames: [n_res * 8] from torsion_angles_to_frames; aatype as above;
// dst:    f32 [n_res, 14, 3] (Å, contiguous).
void frames_to_atom14_positions(std::span<const Rigid> frames, const Tensor& aatype,
                                const Tensor& dst);

// AF2 all_atom.atom14_to_atom37: gathers atom14 positions into the atom37 layout and zeroes
// atoms the residue type lacks.
// atom14:      f32 [n_res, 14, 3] (contiguous); aatype as above;
// atom37:      f32 [n_res, 37, 3] (contiguous) = final_atom_positions;
// atom37_mask: f32 [n_res, 37] (contiguous) = final_atom_mask (atom37_atom_exists).
void atom14_to_atom37(const Tensor& atom14, const Tensor& aatype, const Tensor& atom37,
                      const Tensor& atom37_mask);

// frames [n * 8] -> f32 [n, 8, 4, 4] (contiguous), row-major 4x4 as AF2's sidechain_frames.
void write_frames_4x4(std::span<const Rigid> frames, const Tensor& dst);

}  // namespace cpufold
