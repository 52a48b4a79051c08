// Predicted structures as PDB and mmCIF text, written with gemmi; pLDDT in the B-factor
// column and, in mmCIF, the ModelCIF local and global pLDDT tables (_ma_qa_metric*).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "memory/tensor.h"

namespace cpufold {

struct StructureOutput {
  std::string name;                             // job name: mmCIF data block and entry id
  std::string model_name;                       // e.g. "alphafold2_ptm_model_1_seed_000"
  std::span<const std::int32_t> aatype;         // [n_res] AF2 restype order, 20 = X (UNK)
  std::span<const std::int32_t> residue_index;  // [n_res] 0-based; written 1-based
  Tensor atom_positions;                        // f32 [n_res, 37, 3] Å (final_atom_positions)
  Tensor atom_mask;                             // f32 [n_res, 37] (final_atom_mask)
  Tensor plddt;                                 // f32 [n_res] 0-100
};

// Chain A, one model, atoms where atom_mask > 0.5, B-factor = the residue's pLDDT.
std::string to_pdb(const StructureOutput& s);
std::string to_mmcif(const StructureOutput& s);

}  // namespace cpufold
