// `cpufold evaluate --recycles 0` against the reference: every traced module of iteration 0,
// and the outputs equal to the last Evoformer block's and the single linear's traces.
#include <gtest/gtest.h>

#include "io/hdf5_tensor_file.h"
#include "pipeline/runner/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// The tolerance of each output dataset (../shared/reference/README.md).
testing::Tolerance tolerance_for(const std::string& name) {
  if (name.find("positions") != std::string::npos || name.ends_with("final_trans")) {
    return testing::kAtomPositionTolerance;
  }
  if (name == "outputs/plddt") return testing::kPlddtTolerance;
  if (name.find("predicted_aligned_error") != std::string::npos) return testing::kPaeTolerance;
  if (name == "outputs/ptm_score") return testing::kPtmTolerance;
  return testing::kRepresentationTolerance;
}

// Frames hold a rotation (unitless, representation tolerance) and a translation in Å (an
// atom position: position tolerance); compare the two parts separately.
::testing::AssertionResult matches(const Hdf5TensorReader& ref, const std::string& name,
                                   const Hdf5TensorReader& ours_file) {
  std::vector<float> ours = ours_file.read_f32(name);
  const Shape shape = ours_file.shape(name);
  if (name.ends_with("/angles")) {
    const std::string unnormalized = name.substr(0, name.size() - 6) + "unnormalized_angles";
    return testing::normalized_angles_match_reference(ref, name, unnormalized,
                                                      Tensor(ours.data(), DType::f32, shape),
                                                      testing::kTorsionAngleTolerance);
  }
  const bool tensor4x4 = name.ends_with("sidechain_frames");
  const bool tensor7 = (name.ends_with("frames") && !tensor4x4) || name.ends_with("affine_tensor");
  if (!tensor7 && !tensor4x4) {
    return testing::matches_reference(ref, name, Tensor(ours.data(), DType::f32, shape),
                                      tolerance_for(name));
  }
  const std::vector<float> want = ref.read_f32(name);
  if (want.size() != ours.size()) return ::testing::AssertionFailure() << name << ": sizes differ";
  std::vector<float> rot_ours, rot_ref, trans_ours, trans_ref;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const bool translation = tensor7 ? i % 7 >= 4 : (i % 16 < 12 && i % 4 == 3);
    (translation ? trans_ours : rot_ours).push_back(ours[i]);
    (translation ? trans_ref : rot_ref).push_back(want[i]);
  }
  auto part = [](std::vector<float>& o, const std::vector<float>& r, const std::string& what,
                 testing::Tolerance tol) {
    const Shape flat{static_cast<std::int64_t>(o.size())};
    return testing::matches_reference(what, Tensor(o.data(), DType::f32, flat), r, flat, tol);
  };
  const auto rot = part(rot_ours, rot_ref, name + " (rotation)", testing::kRepresentationTolerance);
  const auto trans =
      part(trans_ours, trans_ref, name + " (translation, Å)", testing::kAtomPositionTolerance);
  if (rot && trans) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << (rot ? "" : rot.message()) << " " << (trans ? "" : trans.message());
}

// Resolves the case's files and runs `evaluate` into a scratch directory.
class EvaluateAgainstReference : public ::testing::TestWithParam<testing::ReferenceCase> {
 protected:
  void SetUp() override {
    const testing::ResolvedCase c = testing::resolve(GetParam());
    if (c.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR unset";
    ASSERT_FALSE(c.reference.empty());
    ASSERT_FALSE(c.params.empty());
    options_.params = c.params;
    options_.features = c.reference;
    options_.out = dir_ / "out.h5";
    options_.trace = dir_ / "trace.h5";
  }

  testing::ScratchDir dir_;
  EvaluateOptions options_;
};

class EvaluateParity : public EvaluateAgainstReference {};

TEST_P(EvaluateParity, FirstPassMatchesEveryTracedModuleAndTheLastBlock) {
  EvaluateOptions& o = options_;
  const auto& ref_path = o.features;
  o.recycles = 0;
  const EvaluateReport report = evaluate(o);
  EXPECT_EQ(report.iterations, 1);

  const Hdf5TensorReader ref(ref_path), trace(o.trace), out(o.out);
  int compared = 0;
  for (const std::string& module : ref.members("trace")) {
    for (const std::string& d : ref.datasets_under("trace/" + module + "/call_0")) {
      ASSERT_TRUE(trace.has(d)) << d << " missing from our trace";
      EXPECT_TRUE(matches(ref, d, trace));
      ++compared;
    }
  }
  EXPECT_GE(compared, 15);

  // Each output is the leading part of a trace: msa the cluster rows (template rows follow
  // them in the trace), msa_first_row the first of them.
  auto expect_output = [&](const std::string& name, const std::string& ref_name) {
    std::vector<float> ours = out.read_f32("outputs/" + name);
    const Shape shape = out.shape("outputs/" + name);
    std::vector<float> expected = ref.read_f32(ref_name);
    ASSERT_GE(expected.size(), ours.size()) << name;
    expected.resize(ours.size());
    EXPECT_TRUE(testing::matches_reference(name, Tensor(ours.data(), DType::f32, shape), expected,
                                           shape, testing::kRepresentationTolerance));
  };
  const std::string last = "trace/evoformer_block_1/call_0/";
  expect_output("msa", last + "out_0");
  expect_output("msa_first_row", last + "out_0");
  expect_output("pair", last + "out_1");
  expect_output("single", "trace/evoformer_single_linear/call_0/out");
}

class EvaluateFullParity : public EvaluateAgainstReference {};

TEST_P(EvaluateFullParity, EveryOutputMatchesWithRecycling) {
  const EvaluateOptions& o = options_;
  const auto& ref_path = o.features;
  evaluate(o);  // as many recycles as the file holds

  const Hdf5TensorReader ref(ref_path), out(o.out), trace(o.trace);
  const std::vector<std::string> names = ref.datasets_under("outputs");
  EXPECT_EQ(names, out.datasets_under("outputs"));
  for (const std::string& name : names) EXPECT_TRUE(matches(ref, name, out));
  // Structure-module traces of every iteration, layer by layer.
  for (const std::string& name : ref.datasets_under("trace/structure_module")) {
    ASSERT_TRUE(trace.has(name)) << name;
    EXPECT_TRUE(matches(ref, name, trace));
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, EvaluateFullParity, ::testing::ValuesIn(testing::all_cases()),
                         [](const auto& info) { return testing::case_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Reference, EvaluateParity, ::testing::ValuesIn(testing::rec1_cases()),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace cpufold
