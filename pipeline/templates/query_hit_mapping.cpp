#include "pipeline/templates/query_hit_mapping.h"

#include <algorithm>
#include <string>

namespace cpufold {
namespace {

std::string without_gaps(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '-') out.push_back(c);
  }
  return out;
}

int min_index(const std::vector<int>& indices) {
  int m = -1;
  for (int i : indices) {
    if (i > -1 && (m < 0 || i < m)) m = i;
  }
  return m;
}

}  // namespace

std::map<int, int> query_to_hit_mapping(const TemplateHit& hit, std::string_view query) {
  std::map<int, int> mapping;
  if (hit.query.empty()) return mapping;
  const std::string hit_query = without_gaps(hit.query);
  const std::string hit_sequence = without_gaps(hit.hit_sequence);
  // The hit's query part may start inside the query (HHsearch aligns a sub-range).
  const std::size_t found = std::string(query).find(hit_query);
  const int offset = found == std::string::npos ? -1 : static_cast<int>(found);
  const int min_hit = min_index(hit.indices_hit), min_query = min_index(hit.indices_query);
  if (min_hit < 0 || min_query < 0) return mapping;
  const std::size_t n = std::min(hit.indices_hit.size(), hit.indices_query.size());
  for (std::size_t c = 0; c < n; ++c) {
    if (hit.indices_hit[c] < 0 || hit.indices_query[c] < 0) continue;
    const int t = hit.indices_hit[c] - min_hit, q = hit.indices_query[c] - min_query;
    if (t >= static_cast<int>(hit_sequence.size()) ||
        q + offset >= static_cast<int>(query.size()) || q + offset < 0) {
      continue;
    }
    mapping[q + offset] = t;
  }
  return mapping;
}

}  // namespace cpufold
