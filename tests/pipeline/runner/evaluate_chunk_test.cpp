// The trunk's results do not depend on the slice size (to fp32 rounding).
#include <gtest/gtest.h>

#include <algorithm>

#include "io/hdf5_tensor_file.h"
#include "pipeline/runner/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// Each chunk set runs in arenas of exactly the size its plan gives: a family sliced with another
// family's chunk would overrun them.
TEST(EvaluateChunking, OutputsAreTheSameForChunkSizes1_3_8NoneAndOnePerFamily) {
  testing::ScratchDir dir;
  auto run = [&](const ChunkSizes& chunks) {
    EvaluateOptions o;
    o.params = testing::tiny_params("model_1_ptm");
    o.features = testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
    std::string name = "chunk" + chunk_sizes_token(chunks) + ".h5";
    std::replace(name.begin(), name.end(), '/', '_');  // "3/1/8/2": one chunk per family
    o.out = dir / name;
    o.recycles = 0;
    o.chunks = chunks;
    const EvaluateReport report = evaluate(o);
    EXPECT_EQ(report.chunks, chunks);
    return o.out;
  };
  const Hdf5TensorReader unchunked(run(ChunkSizes::all(0)));
  for (const ChunkSizes& chunks : {ChunkSizes::all(1), ChunkSizes::all(3), ChunkSizes::all(8),
                                   ChunkSizes{3, 1, 8, 2}, ChunkSizes{0, 5, 2, 0}}) {
    SCOPED_TRACE(describe_chunk_sizes(chunks));
    const Hdf5TensorReader chunked(run(chunks));
    for (const char* name : {"outputs/msa", "outputs/pair", "outputs/single"}) {
      std::vector<float> ours = chunked.read_f32(name);
      const Tensor view(ours.data(), DType::f32, chunked.shape(name));
      EXPECT_TRUE(testing::matches_reference(unchunked, name, view,
                                             testing::kTrunkChunkInvarianceTolerance));
    }
  }
}

TEST(EvaluateErrors, TooManyRecyclesForTheFeatureFileNamesTheFile) {
  testing::ScratchDir dir;
  EvaluateOptions o;
  o.params = testing::tiny_params("model_3_ptm");
  o.features = testing::tiny_reference("model_3_ptm_r24_c8_e16_t0_rec1_s0.h5");
  o.out = dir / "out.h5";
  o.recycles = 5;
  try {
    evaluate(o);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model_3_ptm_r24_c8_e16_t0_rec1_s0.h5"), std::string::npos)
        << e.what();
  }
}

TEST(EvaluateErrors, FeatureFileWithoutInputsIsAnInputError) {
  testing::ScratchDir dir;
  {
    Hdf5TensorWriter w(dir / "empty.h5");
    float x = 0;
    w.write("something/else", Tensor(&x, DType::f32, {1}));
    w.commit();
  }
  EvaluateOptions o;
  o.params = testing::tiny_params("model_3_ptm");
  o.features = dir / "empty.h5";
  o.out = dir / "out.h5";
  EXPECT_THROW(evaluate(o), InputError);
}

}  // namespace
}  // namespace cpufold
