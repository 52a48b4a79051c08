// Template hits from an HHsearch / HHblits result file (.hhr, AF2's pdb_hits.hhr against
// pdb70): AF2 parsers.parse_hhr.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/templates/template_hit.h"

namespace cpufold {

// Every hit paragraph ("No N" ... ) in order. InputError naming `source` for a paragraph whose
// summary line or alignment lines do not parse.
std::vector<TemplateHit> parse_hhr_hits(std::string_view hhr, const std::string& source);

}  // namespace cpufold
