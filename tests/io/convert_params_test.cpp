#include "io/convert_params.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstring>
#include <fstream>
#include <map>

#include "io/hdf5_weights.h"
#include "io/npz_reader.h"
#include "io/weight_store.h"
#include "tests/io/params_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::error_message;
using testing::has;
using testing::ScratchDir;
using testing::tiny_params;

class ConvertParamsPresetTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvertParamsPresetTest, RoundTripIsBitExact) {
  const std::string preset = GetParam();
  const ScratchDir dir;
  const fs::path out = dir / ("params_" + preset + ".h5");
  convert_params(tiny_params(preset), out, preset);

  // No temporary file is left beside the output.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path(), out);
  }
  EXPECT_EQ(files, 1);

  const NpzContents npz = read_npz(tiny_params(preset));
  const WeightStore h5 = WeightStore::open(out);
  ASSERT_EQ(h5.keys().size(), npz.arrays.size());
  for (const NamedTensor& a : npz.arrays) {
    ASSERT_TRUE(h5.contains(a.key)) << a.key;
    const Tensor t = h5.get(a.key);
    EXPECT_EQ(t.dtype(), a.tensor.dtype()) << a.key;
    EXPECT_EQ(t.shape(), a.tensor.shape()) << a.key;
    EXPECT_EQ(std::memcmp(t.data(), a.tensor.data(), a.tensor.nbytes()), 0) << a.key;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u) << a.key;
  }
  EXPECT_TRUE(h5.unused_keys().empty());
  EXPECT_EQ(h5.attributes().at("cpufold_format"), "cpufold-weights-v1");
  EXPECT_EQ(h5.attributes().at("preset"), preset);
  EXPECT_EQ(h5.attributes().at("source_file"), "params_" + preset + ".npz");
}

INSTANTIATE_TEST_SUITE_P(ConvertParams, ConvertParamsPresetTest,
                         ::testing::Values("model_1_ptm", "model_3_ptm"));

// The permissions and file of the mapping that holds `p`, from /proc/self/maps.
std::pair<std::string, std::string> mapping_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
    if (addr < lo || addr >= hi) continue;
    const auto slash = line.find('/');
    return {perms, slash == std::string::npos ? "" : line.substr(slash)};
  }
  return {};
}

TEST(ConvertParamsTest, HdfViewsAreSharedReadOnlyMappingsOfTheFile) {
  const ScratchDir dir;
  const fs::path out = dir / "m3.h5";
  convert_params(tiny_params("model_3_ptm"), out, "model_3_ptm");
  const WeightStore store = WeightStore::open(out);
  for (const std::string& key : {store.keys().front(), store.keys().back()}) {
    const auto [perms, file] = mapping_of(store.get(key).data());
    EXPECT_EQ(perms, "r--s") << key;  // PROT_READ, MAP_SHARED
    EXPECT_EQ(file, fs::canonical(out).string()) << key;
  }
}

TEST(ConvertParamsTest, ReplacesAnExistingOutput) {
  const ScratchDir dir;
  testing::write_file(dir / "out.h5", "stale bytes from an older run");
  convert_params(tiny_params("model_3_ptm"), dir / "out.h5", "model_3_ptm");
  EXPECT_EQ(WeightStore::open(dir / "out.h5").attributes().at("preset"), "model_3_ptm");
}

TEST(ConvertParamsTest, BadInputWritesNothing) {
  const ScratchDir dir;
  testing::write_file(dir / "bad.npz", "PK\x03\x04 not really a zip");
  const std::string msg =
      error_message([&] { convert_params(dir / "bad.npz", dir / "out.h5", "model_1_ptm"); });
  EXPECT_TRUE(has(msg, (dir / "bad.npz").string()));
  EXPECT_FALSE(fs::exists(dir / "out.h5"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(ConvertParamsTest, MissingOutputDirectoryIsAnInputError) {
  const std::string msg = error_message<InputError>(
      [] { convert_params(tiny_params("model_3_ptm"), "/nonexistent/dir/out.h5", "model_3_ptm"); });
  EXPECT_TRUE(has(msg, "/nonexistent/dir/out.h5"));
  EXPECT_TRUE(has(msg, "does not exist"));
}

TEST(Hdf5WeightsTest, KeyEncodingIsReversible) {
  for (const std::string key : {"alphafold/alphafold_iteration/evoformer/preprocess_1d//weights",
                                "a%2Fb", "//x//", "%", ".", "..", "plain"}) {
    const std::string name = encode_hdf5_key(key);
    EXPECT_EQ(name.find('/'), std::string::npos) << key;
    EXPECT_NE(name, ".");
    EXPECT_EQ(decode_hdf5_key(name), key);
  }
  EXPECT_EQ(encode_hdf5_key("a//b"), "a%2F%2Fb");
  EXPECT_EQ(decode_hdf5_key("a%zzb"), std::nullopt);
  EXPECT_EQ(decode_hdf5_key("a%2"), std::nullopt);
  EXPECT_EQ(decode_hdf5_key(""), std::nullopt);
}

TEST(Hdf5WeightsTest, ScalarEmptyAndIntegerArraysRoundTrip) {
  const ScratchDir dir;
  float scalar = 3.25f;
  std::int32_t i32[3] = {1, -2, 3};
  std::int64_t i64[2] = {1ll << 40, -5};
  std::uint8_t u8[5] = {0, 1, 2, 254, 255};
  const std::vector<NamedTensor> arrays = {
      {"s//scalar", Tensor(&scalar, DType::f32, Shape{})},
      {"s//empty", Tensor(zero_element_data(), DType::f32, Shape{0, 4})},
      {"s//i32", Tensor(i32, DType::i32, Shape{3})},
      {"s//i64", Tensor(i64, DType::i64, Shape{2, 1})},
      {"%odd/name.", Tensor(u8, DType::u8, Shape{5})},
  };
  write_hdf5_weights(dir / "w.h5", arrays, {{"cpufold_format", "ignored"}, {"extra", "yes"}});
  const Hdf5Weights w = open_hdf5_weights(dir / "w.h5");
  EXPECT_EQ(w.attributes.at("cpufold_format"), "cpufold-weights-v1");
  EXPECT_EQ(w.attributes.at("extra"), "yes");
  ASSERT_EQ(w.arrays.size(), arrays.size());
  std::map<std::string, Tensor> got;
  for (const NamedTensor& a : w.arrays) got.emplace(a.key, a.tensor);
  for (const NamedTensor& a : arrays) {
    ASSERT_TRUE(got.contains(a.key)) << a.key;
    const Tensor& t = got.at(a.key);
    EXPECT_EQ(t.dtype(), a.tensor.dtype()) << a.key;
    EXPECT_EQ(t.shape(), a.tensor.shape()) << a.key;
    EXPECT_FALSE(t.empty()) << a.key;
    EXPECT_EQ(std::memcmp(t.data(), a.tensor.data(), a.tensor.nbytes()), 0) << a.key;
  }
  EXPECT_EQ(got.at("s//scalar").rank(), 0);
}

// Writes an HDF5 file with one dataset, optionally marked as ours, optionally chunked.
void write_foreign_hdf5(const fs::path& path, const char* format, bool chunked) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  if (format != nullptr) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, std::strlen(format) + 1);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(file, "cpufold_format", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, format);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
  }
  const hid_t group = H5Gcreate2(file, "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[2] = {4, 4};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunked) {
    const hsize_t chunk[2] = {2, 2};
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 4);
  }
  const hid_t ds =
      H5Dcreate2(group, "w%2F%2Fweights", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const float data[16] = {};
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Gclose(group);
  ASSERT_GE(H5Fclose(file), 0);
}

TEST(Hdf5WeightsTest, HdfFileThatIsNotOursIsRefused) {
  const ScratchDir dir;
  write_foreign_hdf5(dir / "other.h5", nullptr, false);
  const std::string msg = error_message([&] { WeightStore::open(dir / "other.h5"); });
  EXPECT_EQ(msg, (dir / "other.h5").string() +
                     " is an HDF5 file but not a cpufold weights file (missing cpufold_format "
                     "attribute); convert AF2 .npz parameters with `cpufold convert-params`");
}

TEST(Hdf5WeightsTest, OtherFormatVersionIsRefused) {
  const ScratchDir dir;
  write_foreign_hdf5(dir / "v0.h5", "cpufold-weights-v0", false);
  const std::string msg = error_message([&] { WeightStore::open(dir / "v0.h5"); });
  EXPECT_TRUE(has(msg, (dir / "v0.h5").string()));
  EXPECT_TRUE(has(msg, "'cpufold-weights-v0'"));
  EXPECT_TRUE(has(msg, "convert-params"));
}

TEST(Hdf5WeightsTest, ChunkedDatasetIsRefusedWithItsKey) {
  const ScratchDir dir;
  write_foreign_hdf5(dir / "chunked.h5", "cpufold-weights-v1", true);
  const std::string msg = error_message([&] { WeightStore::open(dir / "chunked.h5"); });
  EXPECT_TRUE(has(msg, (dir / "chunked.h5").string()));
  EXPECT_TRUE(has(msg, "parameter 'w//weights'"));
  EXPECT_TRUE(has(msg, "chunked"));
}

TEST(Hdf5WeightsTest, TruncatedFileIsReportedAsCorrupt) {
  const ScratchDir dir;
  convert_params(tiny_params("model_3_ptm"), dir / "full.h5", "model_3_ptm");
  const std::string bytes = testing::read_file(dir / "full.h5");
  for (std::size_t keep : {bytes.size() / 2, bytes.size() - 100, std::size_t{600}}) {
    testing::write_file(dir / "cut.h5", bytes.substr(0, keep));
    const std::string msg = error_message([&] { WeightStore::open(dir / "cut.h5"); });
    EXPECT_TRUE(has(msg, (dir / "cut.h5").string())) << keep;
    EXPECT_TRUE(has(msg, "truncated or corrupt")) << keep;
  }
}

}  // namespace
}  // namespace cpufold
