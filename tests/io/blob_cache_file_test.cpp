#include "io/blob_cache_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_support.h"

namespace cpufold::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return v;
}

struct Written {
  ScratchDir dir;
  fs::path file = dir / "c.bin";
  std::vector<std::byte> a = bytes(1000, 1), b = bytes(77, 2);
  Written() {
    const Blob blobs[] = {{"first", a}, {"second", b}};
    write_blob_cache(file, "key", blobs);
  }
};

TEST(BlobCacheFile, RoundTripsBlobsAlignedWithTheirMeta) {
  const Written w;
  const BlobCacheLoad load = load_blob_cache(w.file, "key");
  ASSERT_TRUE(load.cache) << load.problem;
  ASSERT_EQ(load.cache->blobs.size(), 2u);
  EXPECT_EQ(load.cache->blobs[0].meta, "first");
  EXPECT_EQ(load.cache->blobs[1].meta, "second");
  EXPECT_TRUE(std::equal(w.a.begin(), w.a.end(), load.cache->blobs[0].data.begin(),
                         load.cache->blobs[0].data.end()));
  EXPECT_TRUE(std::equal(w.b.begin(), w.b.end(), load.cache->blobs[1].data.begin(),
                         load.cache->blobs[1].data.end()));
  for (const Blob& b : load.cache->blobs)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data.data()) % 64, 0u);
}

TEST(BlobCacheFile, MissingFileIsNoCacheAndNoProblem) {
  const ScratchDir dir;
  const BlobCacheLoad load = load_blob_cache(dir / "none", "key");
  EXPECT_FALSE(load.cache);
  EXPECT_EQ(load.problem, "");
}

TEST(BlobCacheFile, EveryTruncationIsRefused) {
  const Written w;
  const std::string whole = read_file(w.file);
  for (std::size_t n :
       {std::size_t{0}, std::size_t{5}, std::size_t{60}, whole.size() / 2, whole.size() - 1}) {
    write_file(w.file, whole.substr(0, n));
    const BlobCacheLoad load = load_blob_cache(w.file, "key");
    EXPECT_FALSE(load.cache) << n;
    EXPECT_NE(load.problem, "") << n;
  }
}

TEST(BlobCacheFile, AnyFlippedByteIsRefused) {
  const Written w;
  const std::string whole = read_file(w.file);
  // Header, key, index and both blobs (the zero padding between blobs is not covered).
  for (std::size_t at : {std::size_t{3}, std::size_t{20}, std::size_t{72}, std::size_t{100},
                         std::size_t{4096}, std::size_t{4096 + 999}, whole.size() - 1}) {
    std::string damaged = whole;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    write_file(w.file, damaged);
    EXPECT_FALSE(load_blob_cache(w.file, "key").cache) << at;
  }
}

TEST(BlobCacheFile, OtherKeyIsRefused) {
  const Written w;
  const BlobCacheLoad load = load_blob_cache(w.file, "other");
  EXPECT_FALSE(load.cache);
  EXPECT_NE(load.problem.find("other"), std::string::npos) << load.problem;
}

}  // namespace
}  // namespace cpufold::testing
