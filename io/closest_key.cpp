#include "io/closest_key.h"

#include <algorithm>

namespace cpufold {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest_key(std::string_view key,
                                       const std::vector<std::string>& candidates) {
  // A key given without AF2's common prefix is the most common slip.
  const std::string* suffix_match = nullptr;
  int suffix_matches = 0;
  for (const std::string& c : candidates) {
    if (c.size() > key.size() && c.ends_with(key) && c[c.size() - key.size() - 1] == '/') {
      suffix_match = &c;
      ++suffix_matches;
    }
  }
  if (suffix_matches == 1) return *suffix_match;
  const std::string* best = nullptr;
  std::size_t best_distance = std::max<std::size_t>(3, key.size() / 4) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace cpufold
