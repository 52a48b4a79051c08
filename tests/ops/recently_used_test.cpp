#include "ops/recently_used.h"

#include <gtest/gtest.h>

#include <string>

namespace cpufold::detail {
namespace {

TEST(RecentlyUsed, FindMakesAnEntryTheMostRecentAndAFullCacheDropsTheLeastRecent) {
  RecentlyUsed<int, std::string> cache(2);
  EXPECT_EQ(cache.find(1), nullptr);
  cache.insert(1, "one");
  cache.insert(2, "two");
  EXPECT_TRUE(cache.full());
  EXPECT_EQ(cache.least_recent(), "one");
  ASSERT_NE(cache.find(1), nullptr);
  EXPECT_EQ(*cache.find(1), "one");
  EXPECT_EQ(cache.least_recent(), "two") << "found entries move to the front";
  EXPECT_EQ(cache.insert(3, "three"), "three");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(2), nullptr) << "the least recent entry made room";
  EXPECT_NE(cache.find(1), nullptr);
  EXPECT_NE(cache.find(3), nullptr);
}

}  // namespace
}  // namespace cpufold::detail
