// A template's mmCIF file, read with gemmi as AF2's mmcif_parsing reads it: the protein chains'
// SEQRES sequences (by author chain id), each SEQRES position's observed residue, and the
// entry's release date.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cpufold {

struct TemplateChain {
  std::string seqres;  // one-letter codes of _entity_poly_seq (modified residues as their
                       // parent, e.g. MSE -> M; unknown -> X)
  std::vector<std::vector<float>> atom_positions;  // per SEQRES position: [37 * 3] or empty
  std::vector<std::vector<float>> atom_mask;       // per SEQRES position: [37] or empty
};

struct TemplateStructure {
  std::string file_id;                          // PDB id (lowercase) or the custom file's stem
  std::optional<std::string> release_date;      // YYYY-MM-DD, the first revision's date
  std::map<std::string, TemplateChain> chains;  // author chain id -> protein chain (model 1)
};

// InputError naming `path` when it cannot be read or parsed as mmCIF. A file without protein
// chains gives an empty `chains` (AF2's NoChainsError: the hit is skipped).
TemplateStructure read_template_structure(const std::filesystem::path& path,
                                          const std::string& file_id);

// AF2 templates.py _get_atom_positions for one chain: atom37 positions [n, 37, 3] and mask
// [n, 37] per SEQRES position, zero where unobserved. MSE's SE goes to SD; ARG NH1/NH2 swapped
// when NH1 is further from CD. Throws InputError when two observed consecutive CA atoms are
// more than `max_ca_ca` Å apart (AF2's CaDistanceError; AF2 uses 150 Å).
void chain_atom37(const TemplateChain& chain, std::vector<float>& positions,
                  std::vector<float>& mask, double max_ca_ca = 150.0);

}  // namespace cpufold
