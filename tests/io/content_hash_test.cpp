#include "io/content_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cpufold {
namespace {

std::string hash_of(const std::vector<std::vector<std::int32_t>>& vectors) {
  ContentHash h;
  for (const auto& v : vectors) h.add_values(v);
  return h.hex();
}

TEST(ContentHash, PiecesHashAsTheWholeAndVectorsKeepTheirBoundaries) {
  ContentHash whole, pieces;
  whole.add("abcdef", 6);
  pieces.add("abc", 3);
  pieces.add("def", 3);
  EXPECT_EQ(whole.hex(), pieces.hex());
  EXPECT_EQ(whole.hex().size(), 32u);
  EXPECT_NE(hash_of({{1, 2}, {3}}), hash_of({{1}, {2, 3}}));
  EXPECT_EQ(hash_of({{1, 2}, {3}}), hash_of({{1, 2}, {3}}));
}

}  // namespace
}  // namespace cpufold
