// Shared by the triangle-module and template-pair-block tests: reference datasets as owned f32
// buffers and an arena sized by a module's own scratch estimate.
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
