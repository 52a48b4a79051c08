// AF2's template hit prefilter (templates.py _assess_hhsearch_hit), applied before the hit's
// mmCIF file is read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/templates/template_hit.h"

namespace cpufold {

struct HitPrefilter {
  double max_subsequence_ratio = 0.95;  // AF2: an exact subsequence this long is the query
  double min_align_ratio = 0.1;         // AF2: aligned columns / query length must exceed it
  int min_length = 10;                  // AF2: shorter templates are skipped
};

// Why the hit is skipped (AlignRatioError, DuplicateError, LengthError), or nullopt when it
// passes. The release date is checked on the mmCIF file (release_date_passes).
std::optional<std::string> prefilter_hit(const TemplateHit& hit, std::string_view query,
                                         const HitPrefilter& limits = {});

// AF2's date filter: a template released after `max_date` (both YYYY-MM-DD) is skipped. A
// template without a release date passes (AF2-DEVIATION: AF2 cannot featurize it at all).
bool release_date_passes(const std::optional<std::string>& release_date,
                         const std::string& max_date);

}  // namespace cpufold
