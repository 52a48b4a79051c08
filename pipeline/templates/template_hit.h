// One template search hit as AF2's parsers.TemplateHit holds it: the hit's aligned sequence and
// the residue indices of query and hit per alignment column.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cpufold {

struct TemplateHit {
  int index = 0;                    // 1-based rank in the hit file
  std::string name;                 // "1abc_A": PDB id (or custom file stem) and chain
  int aligned_cols = 0;             // aligned (match) columns
  std::optional<double> sum_probs;  // HHsearch's Sum_probs; none for hmmsearch hits
  std::string query;                // the aligned query part (with '-')
  std::string hit_sequence;         // the aligned hit part (uppercase, with '-')
  std::vector<int> indices_query;   // per column: query residue index, -1 for a gap
  std::vector<int> indices_hit;     // per column: hit residue index, -1 for a gap
};

}  // namespace cpufold
