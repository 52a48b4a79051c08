#include "io/weight_store.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <thread>

#include "io/convert_params.h"
#include "io/hdf5_weights.h"
#include "tests/io/params_test_helpers.h"

namespace cpufold {
namespace {

using testing::error_message;
using testing::has;
using testing::npy_bytes;
using testing::read_keys_txt;
using testing::ScratchDir;
using testing::tiny_params;
using testing::write_file;
using testing::write_poisoned_npz;
using testing::write_zip;

const std::string kPreprocess1d = std::string(kAf2Prefix) + "evoformer/preprocess_1d//weights";

TEST(WeightStoreTest, MissingFileIsNamed) {
  const std::string msg =
      error_message([] { WeightStore::open("/nonexistent/dir/params_model_1_ptm.npz"); });
  EXPECT_EQ(msg, "parameter file /nonexistent/dir/params_model_1_ptm.npz does not exist");
}

TEST(WeightStoreTest, UnknownFormatIsNeitherNpzNorHdf5) {
  const ScratchDir dir;
  std::mt19937 rng(3);
  std::string junk(1000, '\0');
  for (char& c : junk) c = static_cast<char>(rng() % 200 + 20);
  write_file(dir / "params.bin", junk);
  const std::string msg = error_message([&] { WeightStore::open(dir / "params.bin"); });
  EXPECT_TRUE(has(msg, (dir / "params.bin").string()));
  EXPECT_TRUE(has(msg, "neither an AlphaFold2 .npz"));
  EXPECT_TRUE(has(msg, "nor a cpufold .h5"));

  write_file(dir / "empty.npz", "");
  EXPECT_TRUE(has(error_message([&] { WeightStore::open(dir / "empty.npz"); }), "is empty"));
  EXPECT_TRUE(has(error_message([&] { WeightStore::open(dir.path()); }), "is a directory"));
}

TEST(WeightStoreTest, TruncatedNpzIsNamed) {
  const ScratchDir dir;
  const std::string good = testing::read_file(tiny_params("model_1_ptm"));
  write_file(dir / "cut.npz", good.substr(0, 100000));
  const std::string msg = error_message([&] { WeightStore::open(dir / "cut.npz"); });
  EXPECT_TRUE(has(msg, (dir / "cut.npz").string()));
  EXPECT_TRUE(has(msg, "truncated or corrupt"));
}

// Bad arrays inside an otherwise valid .npz: the message names the entry and the file.
TEST(WeightStoreTest, BadArraysNameTheEntryAndFile) {
  const ScratchDir dir;
  struct Case {
    std::string npy;
    std::string expected;
  };
  std::string bad_header = npy_bytes("<f4", "(2,)", std::string(8, '\0'));
  bad_header[bad_header.find('{')] = '[';
  const Case cases[] = {
      {bad_header, "malformed .npy header"},
      {npy_bytes("<c8", "(2,)", std::string(16, '\0')), "unsupported dtype '<c8'"},
      {npy_bytes("|b1", "(2,)", std::string(2, '\0')), "unsupported dtype '|b1'"},
      {npy_bytes(">f4", "(2,)", std::string(8, '\0')), "big-endian"},
  };
  for (const Case& c : cases) {
    const auto path = dir / "params.npz";
    write_zip(path, {{"scope//weights.npy", c.npy}}, /*deflate=*/true);
    const std::string msg = error_message([&] { WeightStore::open(path); });
    EXPECT_TRUE(has(msg, "array 'scope//weights.npy' in parameter file " + path.string()));
    EXPECT_TRUE(has(msg, c.expected));
  }
}

class WeightStoreTinyTest : public ::testing::TestWithParam<const char*> {};

TEST_P(WeightStoreTinyTest, EveryKeyOfKeysTxtIsPresentWithItsShape) {
  const std::string preset = GetParam();
  const WeightStore store = WeightStore::open(tiny_params(preset));
  EXPECT_EQ(store.format(), WeightStore::Format::npz);
  EXPECT_TRUE(store.attributes().empty());
  const auto expected =
      read_keys_txt(testing::test_data_dir() / "params" / ("params_" + preset + ".keys.txt"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(store.keys().size(), expected.size());
  std::int64_t count = 0;
  for (const auto& ks : expected) {
    ASSERT_TRUE(store.contains(ks.key)) << ks.key;
    EXPECT_EQ(store.shape_of(ks.key), ks.shape) << ks.key;
    EXPECT_EQ(store.dtype_of(ks.key), DType::f32) << ks.key;
    EXPECT_EQ(ks.dtype, "float32");
    count += ks.shape.numel();
  }
  EXPECT_EQ(store.parameter_count(), count);
  // shape_of and contains do not count as use.
  EXPECT_EQ(store.unused_keys().size(), expected.size());
}

INSTANTIATE_TEST_SUITE_P(WeightStore, WeightStoreTinyTest,
                         ::testing::Values("model_1_ptm", "model_3_ptm"));

TEST(WeightStoreTest, MissingKeyNamesKeyFileAndClosestKey) {
  const WeightStore store = WeightStore::open(tiny_params("model_1_ptm"));
  const std::string typo = std::string(kAf2Prefix) + "evoformer/preprocess_1d//weigths";
  std::string msg = error_message([&] { store.require(typo, Shape{22, 32}); });
  EXPECT_TRUE(has(msg, "parameter '" + typo + "'"));
  EXPECT_TRUE(has(msg, tiny_params("model_1_ptm").string()));
  EXPECT_TRUE(has(msg, "did you mean '" + kPreprocess1d + "'"));

  // Without the common prefix, the full key is suggested.
  msg = error_message([&] { store.get("evoformer/preprocess_1d//weights"); });
  EXPECT_TRUE(has(msg, "did you mean '" + kPreprocess1d + "'"));

  msg = error_message([&] { store.shape_of("no/such//thing_at_all_anywhere"); });
  EXPECT_TRUE(has(msg, "'no/such//thing_at_all_anywhere'"));
  EXPECT_FALSE(has(msg, "did you mean"));
  EXPECT_FALSE(store.contains(typo));
}

TEST(WeightStoreTest, WrongShapeNamesKeyAndBothShapes) {
  const WeightStore store = WeightStore::open(tiny_params("model_1_ptm"));
  const Shape actual = store.shape_of(kPreprocess1d);
  const std::string msg = error_message([&] { store.require(kPreprocess1d, Shape{22, 256}); });
  EXPECT_TRUE(has(msg, "parameter '" + kPreprocess1d + "'"));
  EXPECT_TRUE(has(msg, "has shape " + actual.str()));
  EXPECT_TRUE(has(msg, "expects [22, 256]"));
  // A failed require does not mark the key used.
  const auto unused = store.unused_keys();
  EXPECT_TRUE(std::binary_search(unused.begin(), unused.end(), kPreprocess1d));
}

TEST(WeightStoreTest, UnusedKeysShrinkAsKeysAreRequired) {
  const WeightStore store = WeightStore::open(tiny_params("model_3_ptm"));
  const std::vector<std::string> keys = store.keys();
  ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(store.unused_keys(), keys);

  const Tensor t = store.require(keys[0], store.shape_of(keys[0]));
  EXPECT_EQ(t.shape(), store.shape_of(keys[0]));
  EXPECT_EQ(store.unused_keys().size(), keys.size() - 1);
  store.require(keys[0], store.shape_of(keys[0]));  // twice counts once
  EXPECT_EQ(store.unused_keys().size(), keys.size() - 1);
  store.get(keys[1]);
  const auto unused = store.unused_keys();
  EXPECT_EQ(unused, std::vector<std::string>(keys.begin() + 2, keys.end()));

  // Model threads may require concurrently.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < keys.size(); i += 4) store.get(keys[i]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(store.unused_keys().empty());
}

TEST(WeightStoreTest, StoreIsMovableAndViewsSurviveTheMove) {
  WeightStore a = WeightStore::open(tiny_params("model_3_ptm"));
  const Tensor before = a.get(kPreprocess1d);
  const WeightStore b = std::move(a);
  const Tensor after = b.get(kPreprocess1d);
  EXPECT_EQ(before.data(), after.data());
  EXPECT_EQ(b.unused_keys().size(), b.keys().size() - 1);
}

TEST(WeightStoreTest, HdfStoreMatchesNpzStore) {
  const ScratchDir dir;
  convert_params(tiny_params("model_1_ptm"), dir / "m1.h5", "model_1_ptm");
  const WeightStore npz = WeightStore::open(tiny_params("model_1_ptm"));
  const WeightStore h5 = WeightStore::open(dir / "m1.h5");
  EXPECT_EQ(h5.format(), WeightStore::Format::hdf5);
  EXPECT_EQ(h5.keys(), npz.keys());
  EXPECT_EQ(h5.parameter_count(), npz.parameter_count());
  EXPECT_EQ(h5.attributes().at("preset"), "model_1_ptm");
  EXPECT_EQ(h5.attributes().at("source_file"), "params_model_1_ptm.npz");
  const std::string msg = error_message([&] { h5.require("missing//key", Shape{1}); });
  EXPECT_TRUE(has(msg, (dir / "m1.h5").string()));
}

TEST(WeightStoreTest, NonFiniteNpzParameterIsRefusedNamingFileKeyCountAndIndex) {
  const ScratchDir dir;
  const auto path = dir / "params_model_1_ptm.npz";
  const std::string key = write_poisoned_npz(tiny_params("model_1_ptm"), path, 0, 5, 3);
  const std::string msg = error_message([&] { WeightStore::open(path); });
  EXPECT_TRUE(has(msg, path.string()));
  EXPECT_TRUE(has(msg, "'" + key + "'"));
  // The .npy is Fortran order: file element 3 of the [22, 32] array is [3, 0].
  EXPECT_TRUE(
      has(msg, "f32[22, 32] holds 2 non-finite values (1 NaN, 1 Inf), the first at [3, 0]"));
}

TEST(WeightStoreTest, NonFiniteHdf5ParameterIsRefusedNamingFileKeyCountAndIndex) {
  const ScratchDir dir;
  std::vector<float> good(6, 0.5f), bad(12, 1.f);
  bad[7] = -std::numeric_limits<float>::infinity();
  const std::vector<NamedTensor> arrays = {
      {"a//weights", Tensor(good.data(), DType::f32, Shape{2, 3})},
      {"b//weights", Tensor(bad.data(), DType::f32, Shape{3, 4})}};
  write_hdf5_weights(dir / "w.h5", arrays, {});
  const std::string msg = error_message([&] { WeightStore::open(dir / "w.h5"); });
  EXPECT_TRUE(has(msg, (dir / "w.h5").string()));
  EXPECT_TRUE(has(msg, "'b//weights'"));
  EXPECT_TRUE(has(msg, "1 non-finite value (0 NaN, 1 Inf), the first at [1, 3]"));
}

}  // namespace
}  // namespace cpufold
