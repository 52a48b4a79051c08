#include "structure/residue_constants.h"

#include <string>

#include "memory/error.h"

namespace cpufold {
namespace {

// ---------------------------------------------------------------------------------------------
// Literature facts, transcribed from AF2's alphafold/common/residue_constants.py (DeepMind,
// Apache 2.0; the same values are in OpenFold's openfold/np/residue_constants.py).
// ---------------------------------------------------------------------------------------------

constexpr std::array<std::string_view, kNumRestypesWithX> kResnames = {
    "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE", "LEU",
    "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL", "UNK"};

// atom_types.
constexpr std::array<std::string_view, kNumAtom37> kAtomTypes = {
    "N",   "CA",  "C",   "CB",  "O",   "CG", "CG1", "CG2", "OG",  "OG1", "SG", "CD",  "CD1",
    "CD2", "ND1", "ND2", "OD1", "OD2", "SD", "CE",  "CE1", "CE2", "CE3", "NE", "NE1", "NE2",
    "OE1", "OE2", "CH2", "NH1", "NH2", "OH", "CZ",  "CZ2", "CZ3", "NZ",  "OXT"};

// restype_name_to_atom14_names, in restype order; X (UNK) is all empty.
constexpr std::array<std::array<std::string_view, kNumAtom14>, kNumRestypesWithX> kAtom14Names = {{
    {"N", "CA", "C", "O", "CB", "", "", "", "", "", "", "", "", ""},                    // ALA
    {"N", "CA", "C", "O", "CB", "CG", "CD", "NE", "CZ", "NH1", "NH2", "", "", ""},      // ARG
    {"N", "CA", "C", "O", "CB", "CG", "OD1", "ND2", "", "", "", "", "", ""},            // ASN
    {"N", "CA", "C", "O", "CB", "CG", "OD1", "OD2", "", "", "", "", "", ""},            // ASP
    {"N", "CA", "C", "O", "CB", "SG", "", "", "", "", "", "", "", ""},                  // CYS
    {"N", "CA", "C", "O", "CB", "CG", "CD", "OE1", "NE2", "", "", "", "", ""},          // GLN
    {"N", "CA", "C", "O", "CB", "CG", "CD", "OE1", "OE2", "", "", "", "", ""},          // GLU
    {"N", "CA", "C", "O", "", "", "", "", "", "", "", "", "", ""},                      // GLY
    {"N", "CA", "C", "O", "CB", "CG", "ND1", "CD2", "CE1", "NE2", "", "", "", ""},      // HIS
    {"N", "CA", "C", "O", "CB", "CG1", "CG2", "CD1", "", "", "", "", "", ""},           // ILE
    {"N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "", "", "", "", "", ""},            // LEU
    {"N", "CA", "C", "O", "CB", "CG", "CD", "CE", "NZ", "", "", "", "", ""},            // LYS
    {"N", "CA", "C", "O", "CB", "CG", "SD", "CE", "", "", "", "", "", ""},              // MET
    {"N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ", "", "", ""},    // PHE
    {"N", "CA", "C", "O", "CB", "CG", "CD", "", "", "", "", "", "", ""},                // PRO
    {"N", "CA", "C", "O", "CB", "OG", "", "", "", "", "", "", "", ""},                  // SER
    {"N", "CA", "C", "O", "CB", "OG1", "CG2", "", "", "", "", "", "", ""},              // THR
    {"N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "NE1", "CE2", "CE3", "CZ2", "CZ3",  // TRP
     "CH2"},
    {"N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ", "OH", "", ""},  // TYR
    {"N", "CA", "C", "O", "CB", "CG1", "CG2", "", "", "", "", "", "", ""},              // VAL
    {"", "", "", "", "", "", "", "", "", "", "", "", "", ""},                           // UNK
}};

// chi_angles_atoms: the four atoms defining each chi, in restype order (chi5 of ARG ignored, as
// in AF2). Unused chis are empty; chi_angles_mask is derived from which ones are present.
using ChiAtoms = std::array<std::string_view, 4>;
constexpr std::array<std::array<ChiAtoms, kNumChis>, kNumRestypes> kChiAnglesAtoms = {{
    {},  // ALA
    // ARG
    {{{"N", "CA", "CB", "CG"},
      {"CA", "CB", "CG", "CD"},
      {"CB", "CG", "CD", "NE"},
      {"CG", "CD", "NE", "CZ"}}},
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "OD1"}}},                            // ASN
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "OD1"}}},                            // ASP
    {{{"N", "CA", "CB", "SG"}}},                                                       // CYS
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD"}, {"CB", "CG", "CD", "OE1"}}},  // GLN
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD"}, {"CB", "CG", "CD", "OE1"}}},  // GLU
    {},                                                                                // GLY
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "ND1"}}},                            // HIS
    {{{"N", "CA", "CB", "CG1"}, {"CA", "CB", "CG1", "CD1"}}},                          // ILE
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD1"}}},                            // LEU
    // LYS
    {{{"N", "CA", "CB", "CG"},
      {"CA", "CB", "CG", "CD"},
      {"CB", "CG", "CD", "CE"},
      {"CG", "CD", "CE", "NZ"}}},
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "SD"}, {"CB", "CG", "SD", "CE"}}},  // MET
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD1"}}},                           // PHE
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD"}}},                            // PRO
    {{{"N", "CA", "CB", "OG"}}},                                                      // SER
    {{{"N", "CA", "CB", "OG1"}}},                                                     // THR
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD1"}}},                           // TRP
    {{{"N", "CA", "CB", "CG"}, {"CA", "CB", "CG", "CD1"}}},                           // TYR
    {{{"N", "CA", "CB", "CG1"}}},                                                     // VAL
}};

// chi_pi_periodic (restype order, UNK last).
constexpr float kChiPiPeriodic[kNumRestypesWithX][kNumChis] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 1, 0, 0},  // ALA ARG ASN ASP
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 0},  // CYS GLN GLU GLY
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0},  // HIS ILE LEU LYS
    {0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0},  // MET PHE PRO SER
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0},  // THR TRP TYR VAL
    {0, 0, 0, 0}};                                           // UNK

// rigid_group_atom_positions: [resname, atom, rigid group, position in Å relative to the
// group's frame]. Groups: 0 backbone, 3 psi, 4..7 chi1..chi4 (1 and 2 hold no heavy atoms).
struct LiteratureAtom {
  std::string_view resname, atom;
  int group;
  double x, y, z;
};
constexpr LiteratureAtom kRigidGroupAtomPositions[] = {
    {"ALA", "N", 0, -0.525, 1.363, 0.000},    {"ALA", "CA", 0, 0.000, 0.000, 0.000},
    {"ALA", "C", 0, 1.526, -0.000, -0.000},   {"ALA", "CB", 0, -0.529, -0.774, -1.205},
    {"ALA", "O", 3, 0.627, 1.062, 0.000},     {"ARG", "N", 0, -0.524, 1.362, -0.000},
    {"ARG", "CA", 0, 0.000, 0.000, 0.000},    {"ARG", "C", 0, 1.525, -0.000, -0.000},
    {"ARG", "CB", 0, -0.524, -0.778, -1.209}, {"ARG", "O", 3, 0.626, 1.062, 0.000},
    {"ARG", "CG", 4, 0.616, 1.390, -0.000},   {"ARG", "CD", 5, 0.564, 1.414, 0.000},
    {"ARG", "NE", 6, 0.539, 1.357, -0.000},   {"ARG", "NH1", 7, 0.206, 2.301, 0.000},
    {"ARG", "NH2", 7, 2.078, 0.978, -0.000},  {"ARG", "CZ", 7, 0.758, 1.093, -0.000},
    {"ASN", "N", 0, -0.536, 1.357, 0.000},    {"ASN", "CA", 0, 0.000, 0.000, 0.000},
    {"ASN", "C", 0, 1.526, -0.000, -0.000},   {"ASN", "CB", 0, -0.531, -0.787, -1.200},
    {"ASN", "O", 3, 0.625, 1.062, 0.000},     {"ASN", "CG", 4, 0.584, 1.399, 0.000},
    {"ASN", "ND2", 5, 0.593, -1.188, 0.001},  {"ASN", "OD1", 5, 0.633, 1.059, 0.000},
    {"ASP", "N", 0, -0.525, 1.362, -0.000},   {"ASP", "CA", 0, 0.000, 0.000, 0.000},
    {"ASP", "C", 0, 1.527, 0.000, -0.000},    {"ASP", "CB", 0, -0.526, -0.778, -1.208},
    {"ASP", "O", 3, 0.626, 1.062, -0.000},    {"ASP", "CG", 4, 0.593, 1.398, -0.000},
    {"ASP", "OD1", 5, 0.610, 1.091, 0.000},   {"ASP", "OD2", 5, 0.592, -1.101, -0.003},
    {"CYS", "N", 0, -0.522, 1.362, -0.000},   {"CYS", "CA", 0, 0.000, 0.000, 0.000},
    {"CYS", "C", 0, 1.524, 0.000, 0.000},     {"CYS", "CB", 0, -0.519, -0.773, -1.212},
    {"CYS", "O", 3, 0.625, 1.062, -0.000},    {"CYS", "SG", 4, 0.728, 1.653, 0.000},
    {"GLN", "N", 0, -0.526, 1.361, -0.000},   {"GLN", "CA", 0, 0.000, 0.000, 0.000},
    {"GLN", "C", 0, 1.526, 0.000, 0.000},     {"GLN", "CB", 0, -0.525, -0.779, -1.207},
    {"GLN", "O", 3, 0.626, 1.062, -0.000},    {"GLN", "CG", 4, 0.615, 1.393, 0.000},
    {"GLN", "CD", 5, 0.587, 1.399, -0.000},   {"GLN", "NE2", 6, 0.593, -1.189, -0.001},
    {"GLN", "OE1", 6, 0.634, 1.060, 0.000},   {"GLU", "N", 0, -0.528, 1.361, 0.000},
    {"GLU", "CA", 0, 0.000, 0.000, 0.000},    {"GLU", "C", 0, 1.526, -0.000, -0.000},
    {"GLU", "CB", 0, -0.526, -0.781, -1.207}, {"GLU", "O", 3, 0.626, 1.062, 0.000},
    {"GLU", "CG", 4, 0.615, 1.392, 0.000},    {"GLU", "CD", 5, 0.600, 1.397, 0.000},
    {"GLU", "OE1", 6, 0.607, 1.095, -0.000},  {"GLU", "OE2", 6, 0.589, -1.104, -0.001},
    {"GLY", "N", 0, -0.572, 1.337, 0.000},    {"GLY", "CA", 0, 0.000, 0.000, 0.000},
    {"GLY", "C", 0, 1.517, -0.000, -0.000},   {"GLY", "O", 3, 0.626, 1.062, -0.000},
    {"HIS", "N", 0, -0.527, 1.360, 0.000},    {"HIS", "CA", 0, 0.000, 0.000, 0.000},
    {"HIS", "C", 0, 1.525, 0.000, 0.000},     {"HIS", "CB", 0, -0.525, -0.778, -1.208},
    {"HIS", "O", 3, 0.625, 1.063, 0.000},     {"HIS", "CG", 4, 0.600, 1.370, -0.000},
    {"HIS", "CD2", 5, 0.889, -1.021, 0.003},  {"HIS", "ND1", 5, 0.744, 1.160, -0.000},
    {"HIS", "CE1", 5, 2.030, 0.851, 0.002},   {"HIS", "NE2", 5, 2.145, -0.466, 0.004},
    {"ILE", "N", 0, -0.493, 1.373, -0.000},   {"ILE", "CA", 0, 0.000, 0.000, 0.000},
    {"ILE", "C", 0, 1.527, -0.000, -0.000},   {"ILE", "CB", 0, -0.536, -0.793, -1.213},
    {"ILE", "O", 3, 0.627, 1.062, -0.000},    {"ILE", "CG1", 4, 0.534, 1.437, -0.000},
    {"ILE", "CG2", 4, 0.540, -0.785, -1.199}, {"ILE", "CD1", 5, 0.619, 1.391, 0.000},
    {"LEU", "N", 0, -0.520, 1.363, 0.000},    {"LEU", "CA", 0, 0.000, 0.000, 0.000},
    {"LEU", "C", 0, 1.525, -0.000, -0.000},   {"LEU", "CB", 0, -0.522, -0.773, -1.214},
    {"LEU", "O", 3, 0.625, 1.063, -0.000},    {"LEU", "CG", 4, 0.678, 1.371, 0.000},
    {"LEU", "CD1", 5, 0.530, 1.430, -0.000},  {"LEU", "CD2", 5, 0.535, -0.774, 1.200},
    {"LYS", "N", 0, -0.526, 1.362, -0.000},   {"LYS", "CA", 0, 0.000, 0.000, 0.000},
    {"LYS", "C", 0, 1.526, 0.000, 0.000},     {"LYS", "CB", 0, -0.524, -0.778, -1.208},
    {"LYS", "O", 3, 0.626, 1.062, -0.000},    {"LYS", "CG", 4, 0.619, 1.390, 0.000},
    {"LYS", "CD", 5, 0.559, 1.417, 0.000},    {"LYS", "CE", 6, 0.560, 1.416, 0.000},
    {"LYS", "NZ", 7, 0.554, 1.387, 0.000},    {"MET", "N", 0, -0.521, 1.364, -0.000},
    {"MET", "CA", 0, 0.000, 0.000, 0.000},    {"MET", "C", 0, 1.525, 0.000, 0.000},
    {"MET", "CB", 0, -0.523, -0.776, -1.210}, {"MET", "O", 3, 0.625, 1.062, -0.000},
    {"MET", "CG", 4, 0.613, 1.391, -0.000},   {"MET", "SD", 5, 0.703, 1.695, 0.000},
    {"MET", "CE", 6, 0.320, 1.786, -0.000},   {"PHE", "N", 0, -0.518, 1.363, 0.000},
    {"PHE", "CA", 0, 0.000, 0.000, 0.000},    {"PHE", "C", 0, 1.524, 0.000, -0.000},
    {"PHE", "CB", 0, -0.525, -0.776, -1.212}, {"PHE", "O", 3, 0.626, 1.062, -0.000},
    {"PHE", "CG", 4, 0.607, 1.377, 0.000},    {"PHE", "CD1", 5, 0.709, 1.195, -0.000},
    {"PHE", "CD2", 5, 0.706, -1.196, 0.000},  {"PHE", "CE1", 5, 2.102, 1.198, -0.000},
    {"PHE", "CE2", 5, 2.098, -1.201, -0.000}, {"PHE", "CZ", 5, 2.794, -0.003, -0.001},
    {"PRO", "N", 0, -0.566, 1.351, -0.000},   {"PRO", "CA", 0, 0.000, 0.000, 0.000},
    {"PRO", "C", 0, 1.527, -0.000, 0.000},    {"PRO", "CB", 0, -0.546, -0.611, -1.293},
    {"PRO", "O", 3, 0.621, 1.066, 0.000},     {"PRO", "CG", 4, 0.382, 1.445, 0.0},
    {"PRO", "CD", 5, 0.477, 1.424, 0.0},  // AF2: "manually made angle 2 degrees larger"
    {"SER", "N", 0, -0.529, 1.360, -0.000},   {"SER", "CA", 0, 0.000, 0.000, 0.000},
    {"SER", "C", 0, 1.525, -0.000, -0.000},   {"SER", "CB", 0, -0.518, -0.777, -1.211},
    {"SER", "O", 3, 0.626, 1.062, -0.000},    {"SER", "OG", 4, 0.503, 1.325, 0.000},
    {"THR", "N", 0, -0.517, 1.364, 0.000},    {"THR", "CA", 0, 0.000, 0.000, 0.000},
    {"THR", "C", 0, 1.526, 0.000, -0.000},    {"THR", "CB", 0, -0.516, -0.793, -1.215},
    {"THR", "O", 3, 0.626, 1.062, 0.000},     {"THR", "CG2", 4, 0.550, -0.718, -1.228},
    {"THR", "OG1", 4, 0.472, 1.353, 0.000},   {"TRP", "N", 0, -0.521, 1.363, 0.000},
    {"TRP", "CA", 0, 0.000, 0.000, 0.000},    {"TRP", "C", 0, 1.525, -0.000, 0.000},
    {"TRP", "CB", 0, -0.523, -0.776, -1.212}, {"TRP", "O", 3, 0.627, 1.062, 0.000},
    {"TRP", "CG", 4, 0.609, 1.370, -0.000},   {"TRP", "CD1", 5, 0.824, 1.091, 0.000},
    {"TRP", "CD2", 5, 0.854, -1.148, -0.005}, {"TRP", "CE2", 5, 2.186, -0.678, -0.007},
    {"TRP", "CE3", 5, 0.622, -2.530, -0.007}, {"TRP", "NE1", 5, 2.140, 0.690, -0.004},
    {"TRP", "CH2", 5, 3.028, -2.890, -0.013}, {"TRP", "CZ2", 5, 3.283, -1.543, -0.011},
    {"TRP", "CZ3", 5, 1.715, -3.389, -0.011}, {"TYR", "N", 0, -0.522, 1.362, 0.000},
    {"TYR", "CA", 0, 0.000, 0.000, 0.000},    {"TYR", "C", 0, 1.524, -0.000, -0.000},
    {"TYR", "CB", 0, -0.522, -0.776, -1.213}, {"TYR", "O", 3, 0.627, 1.062, -0.000},
    {"TYR", "CG", 4, 0.607, 1.382, -0.000},   {"TYR", "CD1", 5, 0.716, 1.195, -0.000},
    {"TYR", "CD2", 5, 0.713, -1.194, -0.001}, {"TYR", "CE1", 5, 2.107, 1.200, -0.002},
    {"TYR", "CE2", 5, 2.104, -1.201, -0.003}, {"TYR", "OH", 5, 4.168, -0.002, -0.005},
    {"TYR", "CZ", 5, 2.791, -0.001, -0.003},  {"VAL", "N", 0, -0.494, 1.373, -0.000},
    {"VAL", "CA", 0, 0.000, 0.000, 0.000},    {"VAL", "C", 0, 1.527, -0.000, -0.000},
    {"VAL", "CB", 0, -0.533, -0.795, -1.213}, {"VAL", "O", 3, 0.627, 1.062, -0.000},
    {"VAL", "CG1", 4, 0.540, 1.429, -0.000},  {"VAL", "CG2", 4, 0.533, -0.776, 1.203},
};

// ---------------------------------------------------------------------------------------------
// Derived tables.
// ---------------------------------------------------------------------------------------------

int atom14_slot(int restype, std::string_view atom) {
  for (int k = 0; k < kNumAtom14; ++k) {
    if (kAtom14Names[restype][k] == atom) return k;
  }
  return -1;
}

int restype_of_resname(std::string_view resname) {
  for (int r = 0; r < kNumRestypes; ++r) {
    if (kResnames[r] == resname) return r;
  }
  return -1;
}

void store_frame(const RigidD& frame, float (&dst)[4][4]) {
  double m[16];
  frame.to_tensor_4x4(m);
  for (int i = 0; i < 16; ++i) dst[i / 4][i % 4] = static_cast<float>(m[i]);
}

// Index maps and masks (AF2 make_atom14_masks; absent atoms map to 0).
void add_atom_maps(ResidueConstants& rc) {
  for (int r = 0; r < kNumRestypesWithX; ++r) {
    for (int k = 0; k < kNumAtom14; ++k) {
      const std::string_view name = kAtom14Names[r][k];
      if (name.empty()) continue;
      const int a = atom37_index(name);
      if (a < 0) throw InternalError("residue_constants: unknown atom " + std::string(name));
      rc.atom14_to_atom37[r][k] = a;
      rc.atom37_to_atom14[r][a] = k;
      rc.atom14_mask[r][k] = 1;
      rc.atom37_mask[r][a] = 1;
    }
  }
}

void add_chi_tables(ResidueConstants& rc) {
  for (int r = 0; r < kNumRestypes; ++r) {
    rc.chi_angles_atoms[r] = kChiAnglesAtoms[r];
    for (int c = 0; c < kNumChis; ++c) {
      rc.chi_angles_mask[r][c] = kChiAnglesAtoms[r][c][0].empty() ? 0.0f : 1.0f;
      rc.chi_pi_periodic[r][c] = kChiPiPeriodic[r][c];
    }
  }
}

// Each residue type's literature positions by atom37 index, in double precision.
using LiteraturePositions = std::array<std::array<RigidD::Vec3, kNumAtom37>, kNumRestypes>;

// Per-atom rigid group and literature position; every literature atom has an atom14 slot.
LiteraturePositions add_literature_positions(ResidueConstants& rc) {
  LiteraturePositions positions{};
  for (const LiteratureAtom& la : kRigidGroupAtomPositions) {
    const int r = restype_of_resname(la.resname);
    const int k = r < 0 ? -1 : atom14_slot(r, la.atom);
    if (k < 0)
      throw InternalError("residue_constants: bad literature atom " + std::string(la.atom));
    rc.atom14_to_rigid_group[r][k] = la.group;
    rc.atom14_rigid_group_positions[r][k][0] = static_cast<float>(la.x);
    rc.atom14_rigid_group_positions[r][k][1] = static_cast<float>(la.y);
    rc.atom14_rigid_group_positions[r][k][2] = static_cast<float>(la.z);
    positions[r][atom37_index(la.atom)] = RigidD::Vec3(la.x, la.y, la.z);
  }
  return positions;
}

// Residue type r's eight rigid groups' default frames from its literature positions (its chi
// mask already set).
void add_default_frames(ResidueConstants& rc, int r, const LiteraturePositions& positions) {
  auto pos = [&](std::string_view atom) { return positions[r][atom37_index(atom)]; };
  // Backbone -> backbone and pre-omega -> backbone: identity.
  store_frame(RigidD::identity(), rc.rigid_group_default_frame[r][0]);
  store_frame(RigidD::identity(), rc.rigid_group_default_frame[r][1]);
  // phi -> backbone.
  store_frame(RigidD::from_axes(pos("N") - pos("CA"), RigidD::Vec3(1, 0, 0), pos("N")),
              rc.rigid_group_default_frame[r][2]);
  // psi -> backbone.
  store_frame(RigidD::from_axes(pos("C") - pos("CA"), pos("CA") - pos("N"), pos("C")),
              rc.rigid_group_default_frame[r][3]);
  // chi1 -> backbone.
  if (rc.chi_angles_mask[r][0] != 0) {
    const ChiAtoms& base = kChiAnglesAtoms[r][0];
    store_frame(
        RigidD::from_axes(pos(base[2]) - pos(base[1]), pos(base[0]) - pos(base[1]), pos(base[2])),
        rc.rigid_group_default_frame[r][4]);
  }
  // chi(k) -> chi(k-1): every next rotation axis starts at the previous frame's origin.
  for (int c = 1; c < kNumChis; ++c) {
    if (rc.chi_angles_mask[r][c] == 0) continue;
    const RigidD::Vec3 axis_end = pos(kChiAnglesAtoms[r][c][2]);
    store_frame(RigidD::from_axes(axis_end, RigidD::Vec3(-1, 0, 0), axis_end),
                rc.rigid_group_default_frame[r][4 + c]);
  }
}

// AF2 residue_constants._make_rigid_group_constants, in double precision like its numpy code,
// rounded to float at the end (AF2's tables are float32).
ResidueConstants build() {
  ResidueConstants rc;
  rc.resnames = kResnames;
  rc.atom37_names = kAtomTypes;
  rc.atom14_names = kAtom14Names;
  add_atom_maps(rc);
  add_chi_tables(rc);
  const LiteraturePositions positions = add_literature_positions(rc);
  for (int r = 0; r < kNumRestypes; ++r) add_default_frames(rc, r, positions);
  return rc;
}

}  // namespace

const ResidueConstants& residue_constants() {
  static const ResidueConstants tables = build();
  return tables;
}

int atom37_index(std::string_view atom_name) {
  for (int a = 0; a < kNumAtom37; ++a) {
    if (kAtomTypes[a] == atom_name) return a;
  }
  return -1;
}

int restype_index(char one_letter) {
  const auto pos = kRestypeLetters.find(one_letter);
  return pos == std::string_view::npos ? kUnknownRestypeIndex : static_cast<int>(pos);
}

}  // namespace cpufold
