// The per-iteration checkpoint file: a round trip gives back every byte; a missing, corrupt,
// truncated or foreign file is not used and (unless missing) says why; the key changes with
// anything that changes a run's numbers.
#include "pipeline/runner/run_checkpoint.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "pipeline/runner/synthetic_features.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kRes = 5, kCm = 4, kCz = 3;

// A RecycledState of fixed shapes over `arena`, filled from `seed` (0: zeros).
RecycledState state_in(Arena& arena, float seed) {
  RecycledState s;
  s.msa_first_row = arena.allocate(DType::f32, {kRes, kCm});
  s.pair = arena.allocate(DType::f32, {kRes, kRes, kCz});
  s.prev_pseudo_beta = arena.allocate(DType::f32, {kRes, 3});
  s.ca_prev = arena.allocate(DType::f32, {kRes, 3});
  float v = seed;
  for (const Tensor* t : {&s.msa_first_row, &s.pair, &s.prev_pseudo_beta, &s.ca_prev}) {
    float* p = t->data_as<float>();
    for (std::int64_t i = 0; i < t->numel(); ++i) p[i] = seed == 0 ? 0 : (v += 0.37f);
  }
  return s;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct Fixture {
  testing::ScratchDir dir;
  Arena arena{"test", dram_tier(), 1 << 16};
  RecycledState saved = state_in(arena, 1.5f);
  RunCheckpoint checkpoint{dir.path(), "params_model_1_ptm", "key A"};

  Fixture() {
    saved.iterations = 2;
    saved.seconds = {0.25, 3.5, 1.125, 0.0625};
    checkpoint.save(saved);
  }
  // Loads into zeroed tensors; expects the file not to be used and returns why.
  std::string refused() {
    RecycledState into = state_in(arena, 0);
    const RunCheckpoint::Load load = checkpoint.load(into);
    EXPECT_FALSE(load.loaded);
    EXPECT_EQ(into.iterations, 0);
    const RecycledState zeros = state_in(arena, 0);
    EXPECT_TRUE(same_bytes(into.pair, zeros.pair)) << "a refused file changed the state";
    return load.problem;
  }
};

TEST(RunCheckpoint, RoundTripRestoresEveryByteAndTheIterationAndTimes) {
  Fixture f;
  EXPECT_EQ(f.checkpoint.file().parent_path(), f.dir.path());
  EXPECT_NE(f.checkpoint.file().filename().string().find("params_model_1_ptm."), std::string::npos);
  RecycledState into = state_in(f.arena, 0);
  const RunCheckpoint::Load load = f.checkpoint.load(into);
  ASSERT_TRUE(load.loaded) << load.problem;
  EXPECT_EQ(load.problem, "");
  EXPECT_EQ(into.iterations, 2);
  EXPECT_EQ(into.seconds.trunk, 3.5);
  EXPECT_EQ(into.seconds.heads, 0.0625);
  EXPECT_TRUE(same_bytes(into.msa_first_row, f.saved.msa_first_row));
  EXPECT_TRUE(same_bytes(into.pair, f.saved.pair));
  EXPECT_TRUE(same_bytes(into.prev_pseudo_beta, f.saved.prev_pseudo_beta));
  EXPECT_TRUE(same_bytes(into.ca_prev, f.saved.ca_prev));
}

TEST(RunCheckpoint, MissingFileIsNotLoadedWithoutAProblem) {
  Fixture f;
  f.checkpoint.remove();
  EXPECT_FALSE(fs::exists(f.checkpoint.file()));
  EXPECT_EQ(f.refused(), "");
}

TEST(RunCheckpoint, CorruptDataIsIgnoredWithAProblem) {
  Fixture f;
  std::string bytes = testing::read_file(f.checkpoint.file());
  bytes[bytes.size() - 7] ^= 0x10;  // inside the last tensor
  testing::write_file(f.checkpoint.file(), bytes);
  EXPECT_NE(f.refused().find("checksum"), std::string::npos);
}

TEST(RunCheckpoint, TruncatedFileIsIgnoredWithAProblem) {
  Fixture f;
  const std::string bytes = testing::read_file(f.checkpoint.file());
  for (std::size_t keep : {std::size_t{0}, std::size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE(keep);
    testing::write_file(f.checkpoint.file(), bytes.substr(0, keep));
    EXPECT_NE(f.refused(), "");
  }
}

TEST(RunCheckpoint, FileOfAnotherRunIsIgnoredWithAProblem) {
  Fixture f;
  const RunCheckpoint other(f.dir.path(), "params_model_1_ptm", "key B");
  EXPECT_NE(other.file(), f.checkpoint.file()) << "two runs share a file name";
  fs::copy_file(f.checkpoint.file(), other.file());
  RecycledState into = state_in(f.arena, 0);
  const RunCheckpoint::Load load = other.load(into);
  EXPECT_FALSE(load.loaded);
  EXPECT_NE(load.problem, "");
}

TEST(RunCheckpoint, StateOfOtherShapesIsIgnoredWithAProblem) {
  Fixture f;
  RecycledState into = state_in(f.arena, 0);
  into.pair = f.arena.allocate(DType::f32, {kRes, kRes, kCz + 1});
  const RunCheckpoint::Load load = f.checkpoint.load(into);
  EXPECT_FALSE(load.loaded);
  EXPECT_NE(load.problem, "");
}

TEST(RunCheckpoint, SaveReplacesThePreviousIterationAndLeavesNoTemporary) {
  Fixture f;
  f.saved.iterations = 3;
  f.saved.pair.data_as<float>()[0] = -7;
  f.checkpoint.save(f.saved);
  RecycledState into = state_in(f.arena, 0);
  ASSERT_TRUE(f.checkpoint.load(into).loaded);
  EXPECT_EQ(into.iterations, 3);
  EXPECT_EQ(into.pair.data_as<float>()[0], -7);
  EXPECT_EQ(std::distance(fs::directory_iterator(f.dir.path()), fs::directory_iterator()), 1);
}

TEST(RunCheckpoint, SaveThatCannotWriteWarnsOnceAndTheRunGoesOn) {
  testing::ScratchDir dir;
  Arena arena("test", dram_tier(), 1 << 16);
  RecycledState s = state_in(arena, 1);
  std::vector<std::string> messages;
  RunCheckpoint checkpoint(dir / "gone", "m", "key",
                           [&](const std::string& m) { messages.push_back(m); });
  s.iterations = 1;
  EXPECT_NO_THROW(checkpoint.save(s));
  s.iterations = 2;
  EXPECT_NO_THROW(checkpoint.save(s));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("going on without checkpoints"), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find(checkpoint.file().string()), std::string::npos) << messages[0];
}

// Keys of runs on synthetic features (three samples: recycles 2).
struct KeyCase {
  RunIdentity id;
  SyntheticSizes sizes{.n_res = 6, .msa_rows = 3, .extra_rows = 2, .templates = 0, .iterations = 3};
  std::uint32_t seed = 7;
  std::int64_t tweaked_sample = -1;  // this sample's first msa_feat value is changed

  KeyCase() {
    id.params = testing::test_data_dir() / "params" / "params_model_3_ptm.npz";
    id.recycles = 2;
    id.chunks = ChunkSizes::all(4);
  }
  std::string key() const {
    const FeatureSource synthetic = synthetic_feature_source(sizes, seed);
    FeatureSource source = synthetic;
    source.read = [&](std::int64_t k, Arena& arena) {
      TrunkInputs in = synthetic.read(k, arena);
      if (k == tweaked_sample) in.msa_feat.data_as<float>()[0] += 1;
      return in;
    };
    Arena features("features", dram_tier(), source.bytes_per_iteration + 4096);
    features.allocate(DType::f32, {3});
    const Arena::Mark mark = features.mark();
    std::string k = run_checkpoint_key(id, source, features);
    EXPECT_EQ(features.mark(), mark) << "the key left feature samples in the arena";
    return k;
  }
};

TEST(RunCheckpointKey, SameRunSameKeyAndEveryNumericSettingChangesIt) {
  const std::string base = KeyCase().key();
  EXPECT_EQ(KeyCase().key(), base);
  auto differs = [&](const char* what, auto change) {
    KeyCase c;
    change(c);
    EXPECT_NE(c.key(), base) << what << " does not change the key";
  };
  differs("the features", [](KeyCase& c) { c.seed = 8; });
  differs("the last feature sample", [](KeyCase& c) { c.tweaked_sample = 2; });
  differs("the parameter file", [](KeyCase& c) {
    c.id.params = testing::test_data_dir() / "params" / "params_model_1_ptm.npz";
  });
  differs("the recycles", [](KeyCase& c) { c.id.recycles = 1; });
  differs("the chunk", [](KeyCase& c) { c.id.chunks = ChunkSizes::all(0); });
  differs("one family's chunk", [](KeyCase& c) { c.id.chunks.extra_msa = 2; });
  differs("the early stop", [](KeyCase& c) { c.id.early_stop_tolerance = 0.5; });
  differs("the caller's context", [](KeyCase& c) { c.id.context = "stop_at_score 80"; });
}

// `cp -p`, `rsync -a` and `tar x` keep the mtime of the file they replace.
void set_mtime_of(const fs::path& file, const fs::path& like) {
  struct stat st {};
  ASSERT_EQ(::stat(like.c_str(), &st), 0);
  const timespec times[2] = {st.st_mtim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
}

TEST(RunCheckpointKey, ParameterFileIsKnownByItsBytesNotItsPathSizeOrMtime) {
  const testing::ScratchDir dir;
  KeyCase original;
  KeyCase copy;
  copy.id.params = dir / "params.npz";
  fs::copy_file(original.id.params, copy.id.params);
  set_mtime_of(copy.id.params, original.id.params);
  const std::string key = copy.key();
  EXPECT_EQ(key, original.key()) << "the same bytes elsewhere are the same weights";
  std::string bytes = testing::read_file(copy.id.params);
  bytes[bytes.size() / 2] ^= 1;
  testing::write_file(copy.id.params, bytes);
  set_mtime_of(copy.id.params, original.id.params);
  EXPECT_NE(copy.key(), key);
}

}  // namespace
}  // namespace cpufold
