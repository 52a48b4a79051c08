// Template features from raw template hits to the model's inputs (AF2 data transforms
// fix_templates_aatype, make_template_mask, make_pseudo_beta('template_'),
// atom37_to_torsion_angles). The templates come from pipeline/templates/ (the search and the
// hits' mmCIF files) or from reference features.
#pragma once

#include <cstdint>
#include <vector>

#include "evoformer/trunk_inputs.h"
#include "memory/arena.h"

namespace cpufold {

struct RawTemplates {
  std::int64_t n_templ = 0;
  std::int64_t n_res = 0;
  std::vector<float> aatype_one_hot;      // [n_templ, n_res, 22] HHblits order (as AF2 stores it)
  std::vector<float> all_atom_positions;  // [n_templ, n_res, 37, 3] Å
  std::vector<float> all_atom_mask;       // [n_templ, n_res, 37]
  std::vector<float> sum_probs;           // [n_templ]
};

// `n_templ` all-zero templates of `n_res` residues (masks 0): the largest template input a
// plan must hold before the search has run.
RawTemplates empty_templates(std::int64_t n_templ, std::int64_t n_res);

// Bytes process_templates takes from the arena.
std::size_t template_inputs_bytes(std::int64_t n_templ, std::int64_t n_res);

// Fills every template_* field of `out` (allocated from `arena`) from `raw`.
void process_templates(const RawTemplates& raw, TrunkInputs& out, Arena& arena);

}  // namespace cpufold
