#include "io/hdf5_tensor_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>

#include "memory/error.h"
#include "memory/peak_tracker.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(Hdf5TensorFile, WritesStridedViewsAndReadsThemBack) {
  testing::ScratchDir dir;
  std::vector<float> a(4 * 6);
  std::iota(a.begin(), a.end(), 0.5f);
  std::vector<std::int64_t> b = {3, -1, 7};
  {
    Hdf5TensorWriter w(dir / "out.h5");
    w.write("outputs/pair", Tensor(a.data(), DType::f32, {4, 6}).transpose(0, 1));
    w.write("inputs/aatype", Tensor(b.data(), DType::i64, {3}));
    w.set_root_attribute("preset", "model_1_ptm");
    w.commit();
  }
  Hdf5TensorReader r(dir / "out.h5");
  EXPECT_EQ(r.shape("outputs/pair"), Shape({6, 4}));
  const std::vector<float> pair = r.read_f32("outputs/pair");
  EXPECT_EQ(pair[1], a[6]);  // [0,1] of the transpose is a[1][0]
  std::vector<std::int64_t> back(3);
  r.read("inputs/aatype", Tensor(back.data(), DType::i64, {3}));
  EXPECT_EQ(back, b);
  EXPECT_EQ(r.root_attribute("preset"), "model_1_ptm");
  EXPECT_EQ(r.members("outputs"), std::vector<std::string>{"pair"});
  EXPECT_FALSE(r.has("outputs/missing"));
  EXPECT_FALSE(r.has("nothing/here"));
}

// The largest outputs (the MSA representation: 128 MiB at 256 residues) are written from where
// they are: a copy would raise the run's peak by as much.
TEST(Hdf5TensorFile, ContiguousTensorIsWrittenWithoutACopy) {
  testing::ScratchDir dir;
  const std::int64_t n = std::int64_t{24} << 20;  // 96 MiB of floats
  std::vector<float> big(static_cast<std::size_t>(n), 0.25f);
  big.back() = 7.f;
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";  // VmHWM := VmRSS (Linux >= 4.0)
    if (!reset.flush()) GTEST_SKIP() << "cannot reset the peak RSS here";
  }
  const std::size_t before = os_peak_rss_bytes();
  {
    Hdf5TensorWriter w(dir / "big.h5");
    w.write("outputs/msa", Tensor(big.data(), DType::f32, {n / 256, 256}));
    w.commit();
  }
  const std::size_t grown = os_peak_rss_bytes() - before;
  EXPECT_LT(grown, std::size_t{32} << 20) << "the write copied the tensor";
  Hdf5TensorReader r(dir / "big.h5");
  EXPECT_EQ(r.read_f32("outputs/msa").back(), 7.f);
}

TEST(Hdf5TensorFile, UncommittedWriterLeavesNoFile) {
  testing::ScratchDir dir;
  {
    Hdf5TensorWriter w(dir / "out.h5");
    float x = 1;
    w.write("x", Tensor(&x, DType::f32, {1}));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Hdf5TensorFile, CommitThatCannotRenameRemovesItsTemporary) {
  testing::ScratchDir dir;
  std::filesystem::create_directory(dir / "out.h5");  // a directory where the file should go
  Hdf5TensorWriter w(dir / "out.h5");
  float x = 1;
  w.write("x", Tensor(&x, DType::f32, {1}));
  EXPECT_THROW(w.commit(), InputError);
  std::vector<std::filesystem::path> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) left.push_back(e.path());
  EXPECT_EQ(left, std::vector<std::filesystem::path>{dir / "out.h5"});
}

TEST(Hdf5TensorFile, MissingDatasetAndWrongShapeNameTheDatasetAndFile) {
  testing::ScratchDir dir;
  {
    Hdf5TensorWriter w(dir / "f.h5");
    float x[2] = {1, 2};
    w.write("inputs/seq_mask", Tensor(x, DType::f32, {2}));
    w.commit();
  }
  Hdf5TensorReader r(dir / "f.h5");
  try {
    r.shape("inputs/msa_feat");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("inputs/msa_feat"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("f.h5"), std::string::npos);
  }
  float y[3];
  EXPECT_THROW(r.read("inputs/seq_mask", Tensor(y, DType::f32, {3})), InputError);
}

TEST(Hdf5TensorFile, NonHdf5InputIsAnInputError) {
  testing::ScratchDir dir;
  testing::write_file(dir / "x.h5", "plain text");
  EXPECT_THROW(Hdf5TensorReader(dir / "x.h5"), InputError);
  EXPECT_THROW(Hdf5TensorReader(dir / "absent.h5"), InputError);
}

}  // namespace
}  // namespace cpufold

namespace cpufold {
namespace {

TEST(Hdf5TensorFile, ReadsOneIndexOfTheLastAxisAndRefusesOthers) {
  testing::ScratchDir dir;
  std::vector<std::int64_t> x(2 * 3 * 4);
  std::iota(x.begin(), x.end(), 0);
  {
    Hdf5TensorWriter w(dir / "f.h5");
    w.write("inputs/x", Tensor(x.data(), DType::i64, {2, 3, 4}));
    w.commit();
  }
  Hdf5TensorReader r(dir / "f.h5");
  std::vector<float> got(6);
  r.read_last_axis_index("inputs/x", 2, Tensor(got.data(), DType::f32, {2, 3}));
  EXPECT_EQ(got, (std::vector<float>{2, 6, 10, 14, 18, 22}));
  EXPECT_THROW(r.read_last_axis_index("inputs/x", 4, Tensor(got.data(), DType::f32, {2, 3})),
               InputError);
  EXPECT_THROW(r.read_last_axis_index("inputs/x", 0, Tensor(got.data(), DType::f32, {3, 2})),
               InputError);
}

}  // namespace
}  // namespace cpufold
