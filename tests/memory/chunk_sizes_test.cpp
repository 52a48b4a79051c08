// ChunkSizes: one chunk per family, named as plans, logs and tables print it.
#include "memory/chunk_sizes.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

TEST(ChunkSizes, EachFamilyIndexesItsOwnMember) {
  ChunkSizes k;
  k[ChunkFamily::templates] = 1;
  k[ChunkFamily::extra_msa] = 2;
  k[ChunkFamily::evoformer] = 3;
  k[ChunkFamily::structure] = 4;
  EXPECT_EQ(k, (ChunkSizes{1, 2, 3, 4}));
  const ChunkSizes& c = k;
  EXPECT_EQ(c[ChunkFamily::extra_msa], 2);
  EXPECT_FALSE(k.uniform());
  EXPECT_TRUE(ChunkSizes::all(8).uniform());
  EXPECT_FALSE(ChunkSizes::all(std::optional<std::int64_t>()).has_value());
  EXPECT_EQ(ChunkSizes::all(std::optional<std::int64_t>(5)), ChunkSizes::all(5));
}

TEST(ChunkSizes, OneChunkForAllIsNamedOnceAndMixedOnesPerFamily) {
  EXPECT_EQ(describe_chunk_sizes(ChunkSizes::all(32)), "chunk size 32");
  EXPECT_EQ(describe_chunk_sizes(ChunkSizes::all(0)), "chunk size off (unsliced)");
  EXPECT_EQ(describe_chunk_sizes({0, 16, 32, 0}),
            "chunk sizes templates off, extra-MSA 16, Evoformer 32, structure off");
  EXPECT_EQ(chunk_sizes_token(ChunkSizes::all(32)), "32");
  EXPECT_EQ(chunk_sizes_token({0, 16, 32, 0}), "0/16/32/0");
  EXPECT_STREQ(chunk_family_key(ChunkFamily::extra_msa), "extra_msa");
}

}  // namespace
}  // namespace cpufold
