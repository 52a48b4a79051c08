// Shared by the triangle-module and template-pair-block tests: reference datasets as owned f32
// buffers, the reference file and parameter names per preset, and an arena sized by a module's
// own scratch estimate.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "io/hdf5_tensor_file.h"
#include "memory/arena.h"
#include "memory/tensor.h"
#include "memory/tier.h"
#include "tests/support/parity.h"

namespace cpufold::testing {

// A dataset read into memory this object owns; `view` is the contiguous f32 tensor.
struct OwnedTensor {
  std::vector<float> data;
  Tensor view;

  OwnedTensor(const Hdf5TensorReader& file, const std::string& name) {
    const Shape shape = file.shape(name);
    data.resize(static_cast<std::size_t>(shape.numel()));
    view = Tensor(data.data(), DType::f32, shape);
    file.read(name, view);
  }
  explicit OwnedTensor(const Shape& shape, float fill = 0.f)
      : data(static_cast<std::size_t>(shape.numel()), fill), view(data.data(), DType::f32, shape) {}
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
};

// The single-recycle reference file of a preset ("model_1_ptm" has 2 templates, "model_3_ptm"
// none); both exist tiny and full width.
inline std::string reference_file(const std::string& preset) {
  return preset == "model_1_ptm" ? "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5"
                                 : "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5";
}

// An arena of exactly `bytes` (plus one alignment unit so an empty request still works): a
// module whose scratch estimate is short throws BudgetError.
inline Arena sized_arena(std::size_t bytes) {
  return Arena("scratch", dram_tier(), bytes + Tier::kAlignment);
}

// matches_reference at the representation tolerance, printing the max |Δ| on success too.
inline void expect_matches(const Hdf5TensorReader& file, const std::string& name,
                           const Tensor& ours, Tolerance tol = kRepresentationTolerance) {
  const ::testing::AssertionResult r = matches_reference(file, name, ours, tol);
  if (r) std::cout << "[ parity   ] " << r.message() << "\n";
  EXPECT_TRUE(r);
}

}  // namespace cpufold::testing
