// A synthetic MSA for the feature tests and the runner tests that feed the model from it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pipeline/features/raw_features.h"

namespace cpufold::testing {

// A deterministic synthetic MSA: the query, then rows with substitutions, gaps and deletions.
inline RawFeatures synthetic_raw(std::int64_t n_res, std::int64_t n_rows, std::uint64_t seed) {
  std::uint64_t x = seed * 2654435761u + 1;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::string query;
  for (std::int64_t i = 0; i < n_res; ++i) query += letters[next() % 20];
  Msa msa;
  for (std::int64_t r = 0; r < n_rows; ++r) {
    std::string row = query;
    std::vector<std::int32_t> del(static_cast<std::size_t>(n_res), 0);
    if (r > 0) {
      for (std::int64_t i = 0; i < n_res; ++i) {
        const std::uint32_t u = next() % 100;
        if (u < 25)
          row[static_cast<std::size_t>(i)] = letters[next() % 20];
        else if (u < 35)
          row[static_cast<std::size_t>(i)] = '-';
        if (next() % 100 < 5)
          del[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(next() % 7);
      }
    }
    msa.sequences.push_back(row);
    msa.deletions.push_back(del);
    msa.descriptions.push_back("row" + std::to_string(r));
  }
  const std::vector<std::string> names = {"synthetic.a3m"};
  return make_raw_features(query, std::span(&msa, 1), names);
}

}  // namespace cpufold::testing
