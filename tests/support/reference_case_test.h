// Resolving a reference case inside a test: a full-width case is skipped without
// CPUFOLD_REFERENCE_DIR; a missing file fails the test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "tests/support/reference_cases.h"

namespace cpufold::testing {

// The case's files, or nothing when the test cannot run: marked skipped (full width without
// CPUFOLD_REFERENCE_DIR) or already failed (the variable is set but a file is missing).
inline std::optional<ResolvedCase> open_case(const ReferenceCase& rc) {
  ResolvedCase c = resolve(rc);
  if (c.skip) {
    [] { GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set"; }();
    return std::nullopt;
  }
  if (c.reference.empty() || c.params.empty()) return std::nullopt;  // resolve() failed the test
  return c;
}

// A fixture whose SetUp resolves the case's reference and parameter files.

class ReferenceCaseTest : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  void SetUp() override {
    const ResolvedCase c = resolve(GetParam());
    if (c.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR unset";
    ref_path_ = c.reference;
    params_path_ = c.params;
    ASSERT_FALSE(ref_path_.empty());
    ASSERT_FALSE(params_path_.empty());
  }

  std::filesystem::path ref_path_, params_path_;
};

}  // namespace cpufold::testing
