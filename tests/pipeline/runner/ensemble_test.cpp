// AF2 ensembling in ModelRunner: each member of an iteration starts from the same recycled
// inputs, and pair / single / first MSA row are averaged. Runs the tiny model_1_ptm on the
// tiny reference's inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/features/reference_features.h"
#include "pipeline/runner/model_runner.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

class Ensemble : public ::testing::Test {
 protected:
  Ensemble()
      : file_(testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5")),
        store_(WeightStore::open(testing::tiny_params("model_1_ptm"))),
        config_(ModelConfig::from_weights(store_)),
        runner_(store_, config_) {}

  // One recycle; feature sample i is the reference's iteration sample(i).
  Prediction run(std::int64_t ensemble, const std::function<std::int64_t(std::int64_t)>& sample) {
    FeatureSource source;
    source.iterations = 2 * ensemble;
    source.bytes_per_iteration = trunk_inputs_bytes(file_, /*templates=*/true);
    source.read = [&](std::int64_t i, Arena& arena) {
      return read_trunk_inputs(file_, sample(i), /*templates=*/true, arena);
    };
    RunOptions options;
    options.recycles = 1;
    options.ensemble = ensemble;
    return runner_.run(source, options);
  }

  static float max_difference(const Tensor& a, const Tensor& b) {
    float worst = 0;
    for (std::int64_t i = 0; i < a.numel(); ++i) {
      worst = std::max(worst, std::abs(a.data_as<float>()[i] - b.data_as<float>()[i]));
    }
    return worst;
  }

  Hdf5TensorReader file_;
  WeightStore store_;
  ModelConfig config_;
  ModelRunner runner_;
};

TEST_F(Ensemble, MembersOnTheSameSampleAverageToTheUnensembledRun) {
  const Prediction one = run(1, [](std::int64_t i) { return i; });
  // Both members of iteration k see sample k: the average is the single pass, which only
  // holds when every member starts from the same recycled inputs.
  const Prediction two = run(2, [](std::int64_t i) { return i / 2; });
  EXPECT_EQ(two.iterations, 2);
  EXPECT_LE(max_difference(one.pair, two.pair), 1e-5f);
  EXPECT_LE(max_difference(one.single, two.single), 1e-5f);
  EXPECT_LE(max_difference(one.msa, two.msa), 1e-5f);
  EXPECT_LE(max_difference(one.final_atom_positions, two.final_atom_positions), 1e-4f);
  EXPECT_LE(max_difference(one.plddt, two.plddt), 1e-4f);
}

TEST_F(Ensemble, MembersOnDifferentSamplesChangeTheResult) {
  const Prediction one = run(1, [](std::int64_t i) { return i; });
  // Iteration 0: samples 0 and 1; iteration 1: samples 1 and 0.
  const Prediction two = run(2, [](std::int64_t i) { return (i + i / 2) % 2; });
  EXPECT_GT(max_difference(one.pair, two.pair), 1e-3f);
  EXPECT_GT(max_difference(one.final_atom_positions, two.final_atom_positions), 1e-3f);
}

TEST_F(Ensemble, TooFewSamplesForTheEnsembleIsAnInputError) {
  FeatureSource source;
  source.iterations = 2;
  source.bytes_per_iteration = trunk_inputs_bytes(file_, true);
  source.read = [&](std::int64_t i, Arena& arena) {
    return read_trunk_inputs(file_, i, true, arena);
  };
  RunOptions options;
  options.recycles = 1;
  options.ensemble = 2;
  EXPECT_THROW(runner_.run(source, options), InputError);
}

}  // namespace
}  // namespace cpufold
