// The cache of packed Linear weights: written on first use, mapped after, rebuilt (with a
// warning) when truncated, corrupt or stale, private when nothing can be written, and the
// outputs are bit-identical to Linears without a cache in every case.
#include "ops/weight_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "ops/compute_precision.h"
#include "ops/concat_linear.h"
#include "ops/linear.h"
#include "tests/support/tensor_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {
namespace {

namespace fs = std::filesystem;

// Shapes with oneDNN layouts that are padded (c_out 7, 37) and not (256).
struct Layer {
  std::int64_t c_in, c_out;
};
const Layer kLayers[] = {{64, 256}, {256, 7}, {33, 37}, {256, 64}};

struct Params {
  std::vector<std::unique_ptr<Buffer>> w, b;
  explicit Params(std::uint32_t seed) {
    for (const Layer& l : kLayers) {
      w.push_back(std::make_unique<Buffer>(Shape{l.c_in, l.c_out}));
      b.push_back(std::make_unique<Buffer>(Shape{l.c_out}));
      fill_normal(w.back()->data, seed++, 0.1f);
      fill_normal(b.back()->data, seed++, 0.1f);
    }
  }
};

// Builds every layer (under `cache` when given) and returns each one's output on fixed input.
std::vector<std::vector<float>> build_and_run(const Params& p, WeightCache* cache,
                                              DType compute = DType::f32) {
  std::vector<Linear> layers;
  for (std::size_t i = 0; i < p.w.size(); ++i)
    layers.emplace_back(p.w[i]->view, p.b[i]->view, 1, LinearSource{cache, compute});
  if (cache) cache->finish();
  Arena arena = test_arena();
  std::vector<std::vector<float>> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Buffer x(Shape{5, kLayers[i].c_in}), y(Shape{5, kLayers[i].c_out});
    fill_normal(x.data, 99);
    layers[i].forward(x.view, y.view, arena);
    out.push_back(y.data);
  }
  return out;
}

struct FileId {
  ino_t inode;
  timespec mtime;
};
FileId file_id(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return {st.st_ino, st.st_mtim};
}

const std::string kKey = "test key\n";

TEST(WeightCache, WrittenOnFirstBuildAndMappedUnchangedOnTheSecond) {
  const ScratchDir dir;
  const Params p(1);
  const auto want = build_and_run(p, nullptr);
  const fs::path file = dir / "w.weights";
  {
    WeightCache first(file, kKey);
    EXPECT_EQ(build_and_run(p, &first), want);
    EXPECT_TRUE(first.wrote_file());
    EXPECT_GT(first.residency().shared_bytes, 0u);
    EXPECT_EQ(first.residency().private_bytes, 0u);
  }
  ASSERT_TRUE(fs::exists(file));
  const FileId before = file_id(file);
  WeightCache second(file, kKey);
  EXPECT_EQ(build_and_run(p, &second), want);
  EXPECT_FALSE(second.wrote_file());
  EXPECT_EQ(second.residency().private_bytes, 0u);
  const FileId after = file_id(file);
  EXPECT_EQ(after.inode, before.inode);
  EXPECT_EQ(after.mtime.tv_sec, before.mtime.tv_sec);
  EXPECT_EQ(after.mtime.tv_nsec, before.mtime.tv_nsec);
}

// bf16 Linears keep their weights packed in bf16 in the cache file, mapped like fp32 ones:
// half the bytes, and the same outputs as uncached bf16 Linears.
TEST(WeightCache, Bf16WeightsAreCachedPackedInHalfTheBytes) {
  if (!bf16_support().available) GTEST_SKIP() << "no oneDNN bf16 matmul on this CPU";
  const ScratchDir dir;
  const Params p(3);
  const auto want = build_and_run(p, nullptr, DType::bf16);
  EXPECT_NE(want, build_and_run(p, nullptr)) << "bf16 outputs equal fp32 ones";
  WeightCache f32(dir / "f32.weights", kKey);
  build_and_run(p, &f32);
  {
    WeightCache first(dir / "bf16.weights", kKey);
    EXPECT_EQ(build_and_run(p, &first, DType::bf16), want);
    EXPECT_TRUE(first.wrote_file());
  }
  WeightCache second(dir / "bf16.weights", kKey);
  EXPECT_EQ(build_and_run(p, &second, DType::bf16), want);
  EXPECT_FALSE(second.wrote_file());
  EXPECT_EQ(second.residency().private_bytes, 0u);
  const std::size_t bf16_bytes = second.residency().shared_bytes;
  const std::size_t f32_bytes = f32.residency().shared_bytes;
  EXPECT_GT(bf16_bytes, 0u);
  // Biases stay f32; the weights dominate.
  EXPECT_LT(static_cast<double>(bf16_bytes), 0.6 * static_cast<double>(f32_bytes));
}

// Damages the file in `damage`, then checks a new build warns, rewrites it and computes the
// same outputs, and that the build after that uses it silently.
template <typename F>
void expect_rebuilt_after(F damage, const char* expected_warning) {
  const ScratchDir dir;
  const Params p(7);
  const auto want = build_and_run(p, nullptr);
  const fs::path file = dir / "w.weights";
  {
    WeightCache first(file, kKey);
    build_and_run(p, &first);
  }
  damage(file);
  ::testing::internal::CaptureStderr();
  {
    WeightCache second(file, kKey);
    EXPECT_EQ(build_and_run(p, &second), want);
    EXPECT_TRUE(second.wrote_file());
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: weight cache " + file.string()), std::string::npos) << err;
  EXPECT_NE(err.find(expected_warning), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ::testing::internal::CaptureStderr();
  WeightCache third(file, kKey);
  EXPECT_EQ(build_and_run(p, &third), want);
  EXPECT_FALSE(third.wrote_file());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(WeightCache, TruncatedFileIsRebuiltWithAWarning) {
  expect_rebuilt_after([](const fs::path& f) { fs::resize_file(f, fs::file_size(f) - 100); },
                       "truncated");
}

TEST(WeightCache, CorruptDataIsRebuiltWithAWarning) {
  expect_rebuilt_after(
      [](const fs::path& f) {
        std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
        io.seekp(static_cast<std::streamoff>(fs::file_size(f) - 64));
        io.put('\x5a');
      },
      "checksum");
}

// A cache written under `first_key` from `first`, then built from `second` under kKey: it
// is rebuilt with `expected_warning`, and the results are those without a cache.
void expect_replaced(const std::string& first_key, const Params& first, const Params& second,
                     const char* expected_warning) {
  const ScratchDir dir;
  const fs::path file = dir / "w.weights";
  {
    WeightCache cache(file, first_key);
    build_and_run(first, &cache);
  }
  ::testing::internal::CaptureStderr();
  WeightCache cache(file, kKey);
  EXPECT_EQ(build_and_run(second, &cache), build_and_run(second, nullptr));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cache.wrote_file());
  EXPECT_NE(err.find(expected_warning), std::string::npos) << err;
  EXPECT_EQ(cache.residency().private_bytes, 0u);
}

TEST(WeightCache, FileOfOtherWeightsIsRebuiltWithAWarning) {
  // Same shapes and key, other values (e.g. a new model order in the code): never used.
  expect_replaced(kKey, Params(1), Params(50), "does not match");
}

TEST(WeightCache, FileForAnotherKeyIsRebuiltWithAWarning) {
  expect_replaced("other machine\n", Params(3), Params(3), "made for other");
}

TEST(WeightCache, UnwritableLocationKeepsPrivateCopiesWithAWarning) {
  const ScratchDir dir;
  write_file(dir / "not-a-dir", "x");
  const fs::path file = dir / "not-a-dir" / "w.weights";  // cannot be created, even by root
  const Params p(5);
  ::testing::internal::CaptureStderr();
  WeightCache cache(file, kKey);
  EXPECT_EQ(build_and_run(p, &cache), build_and_run(p, nullptr));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("private copy"), std::string::npos) << err;
  EXPECT_EQ(cache.residency().shared_bytes, 0u);
  EXPECT_GT(cache.residency().private_bytes, 0u);
}

TEST(WeightCache, NoWritableDirectoryForParametersFallsBackWithAWarning) {
  const ScratchDir dir;
  write_file(dir / "not-a-dir", "x");
  ::setenv("CPUFOLD_CACHE_DIR", (dir / "not-a-dir" / "cache").c_str(), 1);
  write_file(dir / "params.npz", "weights");
  ::testing::internal::CaptureStderr();
  const auto cache = WeightCache::for_parameters(dir / "params.npz");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("CPUFOLD_CACHE_DIR");
  EXPECT_TRUE(cache->file().empty());
  EXPECT_NE(err.find("CPUFOLD_CACHE_DIR"), std::string::npos) << err;
  const Params p(2);
  EXPECT_EQ(build_and_run(p, cache.get()), build_and_run(p, nullptr));
  EXPECT_EQ(cache->residency().shared_bytes, 0u);
}

TEST(WeightCache, ParametersCacheLivesInCacheDirAndDependsOnTheFileAndPrecision) {
  const ScratchDir dir;
  ::setenv("CPUFOLD_CACHE_DIR", (dir / "cache").c_str(), 1);
  write_file(dir / "params.npz", "weights");
  const fs::path f32 = WeightCache::for_parameters(dir / "params.npz")->file();
  const fs::path bf16 = WeightCache::for_parameters(dir / "params.npz", DType::bf16)->file();
  write_file(dir / "params.npz", "other weights");
  const fs::path changed = WeightCache::for_parameters(dir / "params.npz")->file();
  ::unsetenv("CPUFOLD_CACHE_DIR");
  EXPECT_EQ(f32.parent_path(), dir / "cache");
  EXPECT_EQ(f32.filename().string().rfind("params.", 0), 0u) << f32;
  EXPECT_NE(f32, bf16);
  EXPECT_NE(f32, changed);
}

TEST(WeightCache, ParametersReplacedBySameSizeAndMtimeGetAnotherCache) {
  const ScratchDir dir;
  ::setenv("CPUFOLD_CACHE_DIR", (dir / "cache").c_str(), 1);
  write_file(dir / "params.npz", "weights A");
  struct stat st {};
  ASSERT_EQ(::stat((dir / "params.npz").c_str(), &st), 0);
  const fs::path before = WeightCache::for_parameters(dir / "params.npz")->file();
  write_file(dir / "params.npz", "weights B");  // as `cp -p` or `rsync -a` would leave it
  const timespec times[2] = {st.st_mtim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "params.npz").c_str(), times, 0), 0);
  const fs::path after = WeightCache::for_parameters(dir / "params.npz")->file();
  ::unsetenv("CPUFOLD_CACHE_DIR");
  EXPECT_NE(before, after);
}

TEST(WeightCache, DisabledByEnvironment) {
  ::setenv("CPUFOLD_WEIGHT_CACHE", "off", 1);
  const auto cache = WeightCache::for_parameters("/nonexistent/params.npz");
  ::unsetenv("CPUFOLD_WEIGHT_CACHE");
  EXPECT_TRUE(cache->file().empty());
}

// Weights in a page-aligned mapping standing in for a mapped parameter file.
struct SourcePages {
  std::size_t bytes = std::size_t{1} << 20;
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ~SourcePages() { ::munmap(data, bytes); }
  Tensor at(std::size_t offset, const Shape& shape, std::uint32_t seed) const {
    Tensor t(static_cast<std::byte*>(data) + offset, DType::f32, shape);
    std::vector<float> v(static_cast<std::size_t>(shape.numel()));
    fill_normal(v, seed, 0.1f);
    std::memcpy(t.data(), v.data(), t.nbytes());
    return t;
  }
};

std::vector<float> run_pair(const SourcePages& src, WeightCache& cache, const Tensor& w,
                            const Tensor& b, const Tensor& q, const Tensor& k) {
  cache.set_source({static_cast<const std::byte*>(src.data), src.bytes});
  const Linear plain(w, b, 1, LinearSource{&cache});
  const Linear qk = concat_linear({q, k}, {}, LinearSource{&cache});
  cache.finish();
  Arena arena = test_arena();
  Buffer x(Shape{3, 64}), y(Shape{3, 32}), z(Shape{3, 48});
  fill_normal(x.data, 4);
  plain.forward(x.view, y.view, arena);
  qk.forward(x.view, z.view, arena);
  std::vector<float> out = y.data;
  out.insert(out.end(), z.data.begin(), z.data.end());
  return out;
}

TEST(WeightCache, CachedBuildDoesNotReadTheSourceWeights) {
  const ScratchDir dir;
  const SourcePages src;
  const Tensor w = src.at(0, {64, 32}, 1), b = src.at(65536, {32}, 2);
  const Tensor q = src.at(131072, {64, 16}, 3), k = src.at(196608, {64, 32}, 4);
  std::vector<float> first;
  {
    WeightCache cache(dir / "w.weights", kKey);
    first = run_pair(src, cache, w, b, q, k);
    EXPECT_TRUE(cache.wrote_file());
  }
  // Any read of the sources (a sampled identity, a reorder, concat_linear's copy) now faults.
  ASSERT_EQ(::mprotect(src.data, src.bytes, PROT_NONE), 0);
  WeightCache cache(dir / "w.weights", kKey);
  EXPECT_EQ(run_pair(src, cache, w, b, q, k), first);
  EXPECT_FALSE(cache.wrote_file());
  EXPECT_EQ(cache.residency().private_bytes, 0u);
}

}  // namespace
}  // namespace cpufold::testing
