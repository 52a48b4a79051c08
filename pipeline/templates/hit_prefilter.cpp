#include "pipeline/templates/hit_prefilter.h"

#include <cstdio>

namespace cpufold {

std::optional<std::string> prefilter_hit(const TemplateHit& hit, std::string_view query,
                                         const HitPrefilter& limits) {
  std::string template_sequence;
  for (char c : hit.hit_sequence) {
    if (c != '-') template_sequence.push_back(c);
  }
  const double n = static_cast<double>(query.size());
  const double align_ratio = hit.aligned_cols / n;
  const double length_ratio = static_cast<double>(template_sequence.size()) / n;
  char buffer[160];
  if (align_ratio <= limits.min_align_ratio) {
    std::snprintf(buffer, sizeof buffer, "aligned to too few query residues (ratio %.3f <= %.2f)",
                  align_ratio, limits.min_align_ratio);
    return buffer;
  }
  if (query.find(template_sequence) != std::string_view::npos &&
      length_ratio > limits.max_subsequence_ratio) {
    std::snprintf(buffer, sizeof buffer,
                  "a duplicate of the query (exact subsequence, length ratio %.3f > %.2f)",
                  length_ratio, limits.max_subsequence_ratio);
    return buffer;
  }
  if (static_cast<int>(template_sequence.size()) < limits.min_length) {
    return "too short (" + std::to_string(template_sequence.size()) + " residues < " +
           std::to_string(limits.min_length) + ")";
  }
  return std::nullopt;
}

bool release_date_passes(const std::optional<std::string>& release_date,
                         const std::string& max_date) {
  return !release_date || *release_date <= max_date;  // ISO dates compare as text
}

}  // namespace cpufold
