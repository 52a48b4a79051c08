// Shared setup for the embedder parity tests: the reference files (tiny in the tree, full width
// from CPUFOLD_REFERENCE_DIR), their weights, and datasets loaded into an arena.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "io/feature_file.h"
#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/arena.h"
#include "ops/run_context.h"
#include "tests/support/parity.h"
#include "tests/support/reference_case_test.h"
#include "tests/support/reference_cases.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {

inline std::string reference_case_name(const ::testing::TestParamInfo<ReferenceCase>& info) {
  return case_name(info.param);
}

// Weights, config, reference file and a scratch arena for one case.
class ReferenceFixture : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  // False when the case cannot run: skipped (full width without CPUFOLD_REFERENCE_DIR) or
  // already failed (the variable is set but a file is missing). Callers `return` then.
  bool open() {
    const std::optional<ResolvedCase> c = open_case(GetParam());
    if (!c) return false;
    store_.emplace(WeightStore::open(c->params));
    config_ = ModelConfig::from_weights(*store_);
    ref_ = std::make_unique<Hdf5TensorReader>(c->reference);
    iterations_ = feature_iterations(*ref_);
    return true;
  }

  RunContext context(std::int64_t chunk = 0, int call = 0) {
    RunContext ctx;
    ctx.scratch = &scratch_;
    ctx.chunk = chunk;
    ctx.call = call;
    return ctx;
  }

  // A dataset of the reference file as a contiguous tensor from `data_` (f32, i64 or i32).
  Tensor load(const std::string& name, DType dtype = DType::f32) {
    Tensor t = data_.allocate(dtype, ref_->shape(name));
    ref_->read(name, t);
    return t;
  }
  // Feature `inputs/<name>` at iteration k.
  Tensor feature(const std::string& name, std::int64_t k, DType dtype = DType::f32) {
    return read_feature(*ref_, name, k, dtype, data_);
  }
  ::testing::AssertionResult matches(const std::string& name, const Tensor& ours,
                                     Tolerance tol = kRepresentationTolerance) {
    return matches_reference(*ref_, name, ours, tol);
  }

  // EXPECTs a match and prints the max / mean |Δ| on success too.
  void expect_matches(const std::string& name, const Tensor& ours,
                      Tolerance tol = kRepresentationTolerance) {
    testing::expect_matches(*ref_, name, ours, tol);
  }

  std::string trace(const std::string& module, std::int64_t call, const std::string& name) {
    return "trace/" + module + "/call_" + std::to_string(call) + "/" + name;
  }

  std::optional<WeightStore> store_;
  ModelConfig config_;
  std::unique_ptr<Hdf5TensorReader> ref_;
  std::int64_t iterations_ = 0;
  Arena data_{"test data", dram_tier(), std::size_t{256} << 20};
  Arena scratch_{"test scratch", dram_tier(), std::size_t{256} << 20};
};

}  // namespace cpufold::testing
