#include "io/npz_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "io/npy.h"
#include "memory/peak_tracker.h"
#include "tests/io/params_test_helpers.h"

namespace cpufold {
namespace {

using testing::error_message;
using testing::has;
using testing::npy_bytes;
using testing::raw_bytes;
using testing::ScratchDir;
using testing::tiny_params;
using testing::write_file;
using testing::write_zip;

std::map<std::string, Tensor> by_key(const NpzContents& c) {
  std::map<std::string, Tensor> out;
  for (const NamedTensor& a : c.arrays) out.emplace(a.key, a.tensor);
  return out;
}

TEST(NpzReaderTest, ReadsEveryArrayOfTinyParams) {
  const NpzContents c = read_npz(tiny_params("model_1_ptm"));
  ASSERT_EQ(c.arrays.size(), 338u);
  for (const NamedTensor& a : c.arrays) {
    EXPECT_TRUE(a.key.starts_with("alphafold/alphafold_iteration/")) << a.key;
    EXPECT_FALSE(a.key.ends_with(".npy")) << a.key;
    EXPECT_EQ(a.tensor.dtype(), DType::f32);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.tensor.data()) % 64, 0u) << a.key;
  }
}

TEST(NpzReaderTest, StorageIsOneTrackedDramRegion) {
  const auto before = PeakTracker::instance().tiers()["dram"].current;
  const NpzContents c = read_npz(tiny_params("model_3_ptm"));
  std::size_t bytes = 0;
  for (const NamedTensor& a : c.arrays) {
    const auto* p = static_cast<const std::byte*>(a.tensor.data());
    EXPECT_GE(p, c.storage.data());
    EXPECT_LE(p + a.tensor.nbytes(), c.storage.data() + c.storage.size());
    bytes += a.tensor.nbytes();
  }
  EXPECT_GE(c.storage.size(), bytes);
  EXPECT_EQ(PeakTracker::instance().tiers()["dram"].current, before + c.storage.size());
}

TEST(NpzReaderTest, DeflatedArchiveReadsEqualToStored) {
  const ScratchDir dir;
  const auto entries = testing::read_zip(tiny_params("model_1_ptm"));
  ASSERT_EQ(entries.size(), 338u);
  write_zip(dir / "deflated.npz", entries, /*deflate=*/true);
  {  // Make sure the copy really is deflated, or the test proves nothing.
    int error = 0;
    zip_t* z = zip_open((dir / "deflated.npz").c_str(), ZIP_RDONLY, &error);
    ASSERT_NE(z, nullptr);
    zip_stat_t st;
    zip_stat_index(z, 0, 0, &st);
    EXPECT_EQ(st.comp_method, ZIP_CM_DEFLATE);
    zip_discard(z);
  }
  const auto stored = by_key(read_npz(tiny_params("model_1_ptm")));
  const NpzContents deflated_contents = read_npz(dir / "deflated.npz");
  const auto deflated = by_key(deflated_contents);
  ASSERT_EQ(deflated.size(), stored.size());
  for (const auto& [key, t] : stored) {
    const auto it = deflated.find(key);
    ASSERT_NE(it, deflated.end()) << key;
    EXPECT_EQ(it->second.shape(), t.shape()) << key;
    EXPECT_EQ(std::memcmp(it->second.data(), t.data(), t.nbytes()), 0) << key;
  }
}

// The reference files hold Fortran-order arrays (exports of transposed weights); each must
// load as the C-order array numpy would return.
TEST(NpzReaderTest, FortranOrderArraysLoadInCOrder) {
  const NpzContents c = read_npz(tiny_params("model_1_ptm"));
  const auto loaded = by_key(c);
  int fortran_arrays = 0;
  for (const auto& e : testing::read_zip(tiny_params("model_1_ptm"))) {
    const auto bytes = std::as_bytes(std::span(e.bytes));
    const NpyView raw = parse_npy(bytes, e.name);
    if (!raw.header.fortran_order) continue;
    ++fortran_arrays;
    const Tensor& t = loaded.at(e.name.substr(0, e.name.size() - 4));
    ASSERT_EQ(t.shape(), raw.header.shape);
    // Column-major: element (i0, i1, ...) is at i0 + n0 * (i1 + n1 * (...)).
    const Shape& s = t.shape();
    std::vector<std::int64_t> index(static_cast<std::size_t>(s.rank()), 0);
    for (std::int64_t n = 0; n < t.numel(); ++n) {
      std::int64_t rest = n, column_major = 0, scale = 1;
      for (int k = s.rank() - 1; k >= 0; --k) {
        index[static_cast<std::size_t>(k)] = rest % s[k];
        rest /= s[k];
      }
      for (int k = 0; k < s.rank(); ++k) {
        column_major += index[static_cast<std::size_t>(k)] * scale;
        scale *= s[k];
      }
      float want;
      std::memcpy(&want, raw.data.data() + 4 * column_major, 4);
      ASSERT_EQ(t.data_as<float>()[n], want) << e.name << " element " << n;
    }
  }
  EXPECT_EQ(fortran_arrays, 75);
}

TEST(NpzReaderTest, ReadsScalarEmptyIntegerAndHalfArrays) {
  const ScratchDir dir;
  write_zip(dir / "mixed.npz",
            {{"scalar.npy", npy_bytes("<f4", "()", raw_bytes(std::vector<float>{2.5f}))},
             {"empty.npy", npy_bytes("<f4", "(0, 3)", "")},
             {"ids.npy", npy_bytes("<i8", "(2,)", raw_bytes(std::vector<std::int64_t>{7, -9}))},
             {"half.npy",
              npy_bytes("<f2", "(2,)", raw_bytes(std::vector<std::uint16_t>{0x3c00, 0xc000}))},
             {"mask.npy", npy_bytes("|u1", "(3,)", std::string("\x01\x00\x01", 3))}},
            /*deflate=*/true);
  const NpzContents c = read_npz(dir / "mixed.npz");
  const auto t = by_key(c);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.at("scalar").rank(), 0);
  EXPECT_EQ(*t.at("scalar").data_as<float>(), 2.5f);
  EXPECT_EQ(t.at("empty").shape(), Shape({0, 3}));
  EXPECT_FALSE(t.at("empty").empty());  // loaded, with zero elements
  EXPECT_EQ(t.at("ids").at<std::int64_t>({1}), -9);
  EXPECT_EQ(t.at("half").dtype(), DType::f32);
  EXPECT_EQ(t.at("half").at<float>({0}), 1.0f);
  EXPECT_EQ(t.at("half").at<float>({1}), -2.0f);
  EXPECT_EQ(t.at("mask").at<std::uint8_t>({2}), 1);
}

TEST(NpzReaderTest, MissingFileIsNamed) {
  const std::string msg = error_message([] { read_npz("/nonexistent/params_model_1.npz"); });
  EXPECT_TRUE(has(msg, "parameter file /nonexistent/params_model_1.npz does not exist"));
}

TEST(NpzReaderTest, RandomBytesAreNotAZip) {
  const ScratchDir dir;
  std::mt19937 rng(7);
  std::string junk(4096, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  write_file(dir / "junk.npz", junk);
  const std::string msg = error_message([&] { read_npz(dir / "junk.npz"); });
  EXPECT_TRUE(has(msg, (dir / "junk.npz").string()));
  EXPECT_TRUE(has(msg, "as a zip archive"));
  EXPECT_TRUE(has(msg, "Not a zip archive"));
}

TEST(NpzReaderTest, TruncatedZipIsReportedAsCorrupt) {
  const ScratchDir dir;
  const std::string good = testing::read_file(tiny_params("model_3_ptm"));
  write_file(dir / "cut.npz", good.substr(0, good.size() / 2));
  const std::string msg = error_message([&] { read_npz(dir / "cut.npz"); });
  EXPECT_TRUE(has(msg, (dir / "cut.npz").string()));
  EXPECT_TRUE(has(msg, "truncated or corrupt"));
}

TEST(NpzReaderTest, CrcMismatchNamesTheEntry) {
  const ScratchDir dir;
  std::string bytes = testing::read_file(tiny_params("model_3_ptm"));
  // First local header: 30 fixed bytes, then the name and extra field, then the entry data.
  const auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(static_cast<unsigned char>(bytes[at]) |
                                    (static_cast<unsigned char>(bytes[at + 1]) << 8));
  };
  const std::string name = bytes.substr(30, u16(26));
  const std::size_t data = 30 + u16(26) + u16(28);
  bytes[data + 200] = static_cast<char>(bytes[data + 200] ^ 0x5a);  // inside the array data
  write_file(dir / "flipped.npz", bytes);
  const std::string msg = error_message([&] { read_npz(dir / "flipped.npz"); });
  EXPECT_TRUE(has(msg, "array '" + name + "'"));
  EXPECT_TRUE(has(msg, (dir / "flipped.npz").string()));
  EXPECT_TRUE(has(msg, "CRC"));
}

TEST(NpzReaderTest, BadNpyInsideNamesTheEntry) {
  const ScratchDir dir;
  std::string bad = npy_bytes("<f4", "(2,)", std::string(8, '\0'));
  bad.replace(bad.find("'descr'"), 7, "'dascr'");
  write_zip(dir / "bad.npz",
            {{"good.npy", npy_bytes("<f4", "(2,)", std::string(8, '\0'))},
             {"scope//bad_weights.npy", bad}},
            /*deflate=*/false);
  const std::string msg = error_message([&] { read_npz(dir / "bad.npz"); });
  EXPECT_TRUE(
      has(msg, "array 'scope//bad_weights.npy' in parameter file " + (dir / "bad.npz").string()));
  EXPECT_TRUE(has(msg, "malformed .npy header"));
}

TEST(NpzReaderTest, TruncatedNpyInsideNamesTheEntry) {
  const ScratchDir dir;
  write_zip(dir / "short.npz", {{"w.npy", npy_bytes("<f4", "(4, 4)", std::string(60, '\0'))}},
            /*deflate=*/true);
  const std::string msg = error_message([&] { read_npz(dir / "short.npz"); });
  EXPECT_TRUE(has(msg, "array 'w.npy' in parameter file " + (dir / "short.npz").string()));
  EXPECT_TRUE(has(msg, "truncated"));
  EXPECT_TRUE(has(msg, "64 bytes"));
}

TEST(NpzReaderTest, NonNpyEntryIsRefused) {
  const ScratchDir dir;
  write_zip(dir / "extra.npz", {{"README.txt", "hello"}}, /*deflate=*/false);
  const std::string msg = error_message([&] { read_npz(dir / "extra.npz"); });
  EXPECT_TRUE(has(msg, "entry 'README.txt'"));
  EXPECT_TRUE(has(msg, "is not a .npy array"));
}

TEST(NpzReaderDeathTest, StorageIsReadOnly) {
  const NpzContents c = read_npz(tiny_params("model_3_ptm"));
  ASSERT_FALSE(c.arrays.empty());
  float* p = c.arrays.front().tensor.data_as<float>();
  EXPECT_DEATH(*static_cast<volatile float*>(p) = 1.0f, "");  // SIGSEGV: PROT_READ
}

}  // namespace
}  // namespace cpufold
