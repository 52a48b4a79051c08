// `cpufold evaluate --recycles 0` against the reference: every traced module of iteration 0,
// and the outputs equal to the last Evoformer block's and the single linear's traces.
#include <gtest/gtest.h>

#include "io/hdf5_tensor_file.h"
#include "pipeline/evaluate.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

struct Case {
  const char* preset;
  const char* file;
  bool full_width;
};

const Case kCases[] = {
    {"model_1_ptm", "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5", false},
    {"model_3_ptm", "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5", false},
    {"model_1_ptm", "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5", true},
    {"model_3_ptm", "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5", true},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.full_width ? "full_width/" : "tiny/") << c.file;
}

class EvaluateParity : public ::testing::TestWithParam<Case> {};

TEST_P(EvaluateParity, FirstPassMatchesEveryTracedModuleAndTheLastBlock) {
  const Case& c = GetParam();
  if (c.full_width && !testing::reference_dir()) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR unset";
  const auto ref_path =
      c.full_width ? testing::full_width_reference(c.file) : testing::tiny_reference(c.file);
  const auto params =
      c.full_width ? testing::full_width_params(c.preset) : testing::tiny_params(c.preset);
  ASSERT_FALSE(ref_path.empty());
  ASSERT_FALSE(params.empty());

  testing::ScratchDir dir;
  EvaluateOptions o;
  o.params = params;
  o.features = ref_path;
  o.out = dir / "out.h5";
  o.trace = dir / "trace.h5";
  o.recycles = 0;
  const EvaluateReport report = evaluate(o);
  EXPECT_EQ(report.iterations, 1);

  const Hdf5TensorReader ref(ref_path), trace(o.trace), out(o.out);
  int compared = 0;
  for (const std::string& module : ref.members("trace")) {
    if (module == "structure_module") continue;  // the structure module is not built yet
    for (const std::string& d : ref.datasets_under("trace/" + module + "/call_0")) {
      ASSERT_TRUE(trace.has(d)) << d << " missing from our trace";
      std::vector<float> ours = trace.read_f32(d);
      const Tensor view(ours.data(), DType::f32, trace.shape(d));
      EXPECT_TRUE(testing::matches_reference(ref, d, view, testing::kRepresentationTolerance));
      ++compared;
    }
  }
  EXPECT_GE(compared, 15);

  const std::string last = "trace/evoformer_block_1/call_0/";
  auto expect_output = [&](const std::string& name, const std::string& ref_name,
                           std::int64_t rows) {
    std::vector<float> ours = out.read_f32("outputs/" + name);
    Tensor view(ours.data(), DType::f32, out.shape("outputs/" + name));
    const Shape ref_shape = ref.shape(ref_name);
    std::vector<float> expected = ref.read_f32(ref_name);
    Shape want = ref_shape;
    if (rows >= 0) {  // the cluster rows (templates' rows follow them in the trace)
      want[0] = rows;
      expected.resize(static_cast<std::size_t>(want.numel()));
    }
    EXPECT_TRUE(
        testing::matches_reference(name, view, expected, want, testing::kRepresentationTolerance));
  };
  expect_output("msa", last + "out_0", report.n_seq);
  expect_output("pair", last + "out_1", -1);
  expect_output("single", "trace/evoformer_single_linear/call_0/out", -1);
  std::vector<float> first_row = ref.read_f32(last + "out_0");
  first_row.resize(static_cast<std::size_t>(report.n_res * out.shape("outputs/msa_first_row")[1]));
  std::vector<float> ours = out.read_f32("outputs/msa_first_row");
  EXPECT_TRUE(testing::matches_reference(
      "msa_first_row", Tensor(ours.data(), DType::f32, out.shape("outputs/msa_first_row")),
      first_row, out.shape("outputs/msa_first_row"), testing::kRepresentationTolerance));
}

INSTANTIATE_TEST_SUITE_P(Reference, EvaluateParity, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           return std::string(info.param.full_width ? "full_" : "tiny_") +
                                  info.param.preset;
                         });

}  // namespace
}  // namespace cpufold
