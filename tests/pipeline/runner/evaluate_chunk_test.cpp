// The trunk's results do not depend on the slice size (to fp32 rounding).
#include <gtest/gtest.h>

#include "io/hdf5_tensor_file.h"
#include "pipeline/runner/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(EvaluateChunking, OutputsAreTheSameForChunkSizes1_3_8AndNone) {
  testing::ScratchDir dir;
  auto run = [&](std::int64_t chunk) {
    EvaluateOptions o;
    o.params = testing::tiny_params("model_1_ptm");
    o.features = testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
    o.out = dir / ("chunk" + std::to_string(chunk) + ".h5");
    o.recycles = 0;
    o.chunk_size = chunk;
    evaluate(o);
    return o.out;
  };
  const Hdf5TensorReader unchunked(run(0));
  for (std::int64_t chunk : {1, 3, 8}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    const Hdf5TensorReader chunked(run(chunk));
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
