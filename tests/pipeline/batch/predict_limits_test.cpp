// The predict options' ranges, checked for callers of predict() that skip the command line in
// the command line's words.
#include "pipeline/batch/predict_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "memory/error.h"
#include "pipeline/batch/predict.h"

namespace cpufold {
namespace {

std::string refusal(const PredictOptions& o) {
  try {
    batch_inputs(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PredictLimitsTest, RangeTextAndRefusal) {
  EXPECT_EQ(integer_range_text(1, 5), "an integer from 1 to 5");
  EXPECT_EQ(integer_range_text(1, 8, "why"), "an integer from 1 to 8 (why)");
  EXPECT_NO_THROW(require_in_range(kNumSeedsRange, 1));
  EXPECT_NO_THROW(require_in_range(kNumSeedsRange, kMaxSeeds));
  try {
    require_in_range(kNumSeedsRange, 0);
    FAIL() << "0 seeds accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--num-seeds: '0' is out of range: expected an integer from 1 to 10000");
  }
}

TEST(PredictLimitsTest, PredictRefusesWhatTheCommandLineRefuses) {
  PredictOptions o;
  o.num_recycle = kMaxRecycles + 1;
  EXPECT_EQ(refusal(o),
            "--num-recycle: '1001' is out of range: expected an integer from 0 to 1000");
  o = PredictOptions{};
  o.num_models = 6;
  EXPECT_EQ(refusal(o), "--num-models: '6' is out of range: expected an integer from 1 to 5");
  o = PredictOptions{};
  o.model_order = {1, 7};
  o.num_models = 2;
  EXPECT_EQ(refusal(o), "--model-order: '7' is out of range: expected an integer from 1 to 5");
  o = PredictOptions{};
  o.chunks = ChunkSizes::all(-1);
  EXPECT_EQ(refusal(o),
            "--chunk-size: '-1' is out of range: expected an integer from 0 to 1000000");
  o = PredictOptions{};
  o.num_ensemble = 0;
  EXPECT_EQ(refusal(o), "--num-ensemble: '0' is out of range: expected an integer from 1 to 100");
}

TEST(PredictLimitsTest, CrossOptionChecksStay) {
  PredictOptions o;
  o.model_order = {1, 1};
  o.num_models = 2;
  EXPECT_EQ(refusal(o), "--model-order names model 1 twice");
  o.model_order = {2};
  EXPECT_EQ(refusal(o), "--num-models 2 needs as many models in --model-order, which lists 1");
}

}  // namespace
}  // namespace cpufold
