#include "pipeline/batch/deepest_msa.h"

#include <algorithm>
#include <string>

namespace cpufold {

Msa deepest_msa(std::string_view query, std::int64_t rows) {
  // Row r writes r's digits in base 21 over the first few columns: every row differs from the
  // others; one spare row covers the row whose digits happen to spell the query's start.
  static constexpr std::string_view kDigits = "ACDEFGHIKLMNPQRSTVWY-";
  const auto n = static_cast<std::int64_t>(query.size());
  std::int64_t columns = 0;
  for (std::int64_t span = 1; span < rows + 1 && columns < n; span *= 21) ++columns;
  std::int64_t distinct = 1;
  for (std::int64_t c = 0; c < columns; ++c) distinct *= 21;
  const std::int64_t total = std::min(rows + 1, std::max<std::int64_t>(distinct, 1));

  Msa msa;
  msa.sequences.reserve(static_cast<std::size_t>(total));
  msa.sequences.emplace_back(query);
  for (std::int64_t r = 1; r < total; ++r) {
    std::string row(query);
    std::int64_t digits = r;
    for (std::int64_t c = 0; c < columns; ++c, digits /= 21) {
      row[static_cast<std::size_t>(c)] = kDigits[static_cast<std::size_t>(digits % 21)];
    }
    msa.sequences.push_back(std::move(row));
  }
  msa.deletions.assign(msa.sequences.size(), std::vector<std::int32_t>(query.size(), 0));
  msa.descriptions.assign(msa.sequences.size(), "planned");
  msa.descriptions.front() = "query";
  return msa;
}

}  // namespace cpufold
