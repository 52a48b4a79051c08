// The residue alphabets of the AF2 data pipeline: HHblits ids of MSA rows (as AF2's raw
// features store them), AF2's residue type order, and the map between the two.
#pragma once

#include <array>
#include <cstdint>

namespace cpufold {

// AF2 residue type order (residue_constants.restypes) followed by X; index 20 is X.
inline constexpr char kAf2Restypes[] = "ARNDCQEGHILKMFPSTWYVX";
inline constexpr int kAf2UnknownRestype = 20;  // X
inline constexpr int kMsaGapToken = 21;        // '-' in both orders
inline constexpr int kMsaMaskToken = 22;       // masked-MSA [MASK], after the 22 MSA tokens

// HHblits id of an MSA letter (AF2 residue_constants.HHBLITS_AA_TO_ID): the 20 amino acids in
// one-letter alphabetical order (A=0, C=1, D=2 ... Y=19), B->D, Z->E, U->C, J/O/X->20 (X),
// '-'->21. -1 for any other character (lowercase included: A3M insertions are not match
// columns).
int hhblits_id(char letter);

// AF2 residue type of a query letter (residue_constants.sequence_to_onehot with
// restype_order_with_x and map_unknown_to_x): the 20 standard amino acids, any other
// uppercase letter -> X (20). -1 for a character that is not an uppercase letter.
int af2_restype(char letter);

// HHblits id -> AF2 order (residue_constants.MAP_HHBLITS_AATYPE_TO_OUR_AATYPE), X and gap
// unchanged.
inline constexpr std::array<std::int8_t, 22> kHhblitsToAf2 = {
    0, 4, 3, 6, 13, 7, 8, 9, 11, 10, 12, 2, 14, 5, 1, 15, 16, 19, 17, 18, 20, 21};

}  // namespace cpufold
