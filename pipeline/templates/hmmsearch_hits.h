// Template hits from hmmsearch's Stockholm output (AF2's pdb_hits.sto): AF2
// parsers.convert_stockholm_to_a3m(remove_first_row_gaps=False) then parse_hmmsearch_a3m.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/templates/template_hit.h"

namespace cpufold {

// Every protein hit ("mol:protein" in its description; other molecules are skipped), in file
// order. Each row is named "PDBID_CHAIN/START-END". InputError naming `source` for a row name
// or description AF2 could not parse either, or rows that do not match the query's length.
std::vector<TemplateHit> parse_hmmsearch_hits(std::string_view sto, std::string_view query,
                                              const std::string& source);

}  // namespace cpufold
