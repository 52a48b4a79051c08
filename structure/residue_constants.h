// AF2's residue constants (alphafold/common/residue_constants.py, identical in OpenFold's
// openfold/np/residue_constants.py): residue types, the atom37 and atom14 atom orders, and the
// rigid-group tables used to turn torsion angles into atoms (AF2 supplement 1.8.1, Table 2).
// Only literature facts are typed in (residue_constants.cpp); every derived table is built
// from them once, on first use, exactly as AF2's _make_rigid_group_constants does.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "structure/rigid.h"

namespace cpufold {

inline constexpr int kNumRestypes = 20;       // ARNDCQEGHILKMFPSTWYV
inline constexpr int kNumRestypesWithX = 21;  // + X (unknown), index 20
inline constexpr int kUnknownRestypeIndex = 20;
inline constexpr int kNumAtom37 = 37;
inline constexpr int kNumAtom14 = 14;
inline constexpr int kNumRigidGroups = 8;  // backbone, pre-omega, phi, psi, chi1..chi4
inline constexpr int kNumChis = 4;
inline constexpr int kNumTorsions = 7;  // pre-omega, phi, psi, chi1..chi4 (groups 1..7)

// AF2 restypes order; restype index = position in this string, X = 20.
inline constexpr std::string_view kRestypeLetters = "ARNDCQEGHILKMFPSTWYV";

struct ResidueConstants {
  // Three-letter names in restype order ("UNK" for X).
  std::array<std::string_view, kNumRestypesWithX> resnames{};
  // atom_types: the atom37 order, N CA C CB O CG ... NZ OXT.
  std::array<std::string_view, kNumAtom37> atom37_names{};
  // restype_name_to_atom14_names ("" for an empty slot; all empty for X).
  std::array<std::array<std::string_view, kNumAtom14>, kNumRestypesWithX> atom14_names{};

  // chi_angles_atoms: the 4 atoms of each chi ("" for chis the residue lacks; all "" for X).
  std::array<std::array<std::array<std::string_view, 4>, kNumChis>, kNumRestypesWithX>
      chi_angles_atoms{};

  // Index maps as AF2's make_atom14_masks builds them: an absent atom maps to 0.
  std::int32_t atom14_to_atom37[kNumRestypesWithX][kNumAtom14]{};
  std::int32_t atom37_to_atom14[kNumRestypesWithX][kNumAtom37]{};
  float atom14_mask[kNumRestypesWithX][kNumAtom14]{};
  float atom37_mask[kNumRestypesWithX][kNumAtom37]{};

  // Rigid-group tables. default_frame[r][g] maps group g's frame to its parent (backbone for
  // groups 0..4, chi(k-1) for chi k >= 2) as a row-major 4x4. As in AF2, groups 0 and 1 are
  // the identity for the 20 amino acids, frames of absent chis are all zero, and every frame
  // of X is all zero.
  float rigid_group_default_frame[kNumRestypesWithX][kNumRigidGroups][4][4]{};
  float atom14_rigid_group_positions[kNumRestypesWithX][kNumAtom14][3]{};  // Å, in the group frame
  std::int32_t atom14_to_rigid_group[kNumRestypesWithX][kNumAtom14]{};     // 0 for empty slots
  float chi_angles_mask[kNumRestypesWithX][kNumChis]{};                    // X: all zero
  float chi_pi_periodic[kNumRestypesWithX][kNumChis]{};

  // rigid_group_default_frame[r][g] as a Rigid.
  Rigid default_frame(int restype, int group) const {
    return Rigid::from_tensor_4x4(&rigid_group_default_frame[restype][group][0][0]);
  }
};

// The tables, built on the first call (thread-safe) and immutable afterwards.
const ResidueConstants& residue_constants();

// atom37 index of an atom name ("CA" -> 1), or -1.
int atom37_index(std::string_view atom_name);
// restype index of a one-letter code; anything outside the 20 amino acids maps to X (20).
int restype_index(char one_letter);

}  // namespace cpufold
