// `--precision auto|bf16|fp32` end to end: where oneDNN has no bf16 matmul (forced with
// ONEDNN_MAX_CPU_ISA=AVX2) bf16 is refused with a clear error and auto says why it runs fp32;
// where it has one, bf16 runs and plans the trunk's weights in fewer bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ops/compute_precision.h"
#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::run_command;
using testing::run_cpufold;

std::string q(const std::filesystem::path& p) {
  return std::string("'").append(p.string()).append("'");
}

std::string tiny_features() {
  return "--params " + q(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") +
         " --features " +
         q(testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
}

testing::CommandResult run_on_avx2(const std::string& args) {
  return run_command(std::string("ONEDNN_MAX_CPU_ISA=AVX2 '") + CPUFOLD_BINARY + "' " + args);
}

TEST(Precision, Bf16WithoutOneDnnBf16IsAnInputErrorBeforeAnyWork) {
  const testing::ScratchDir dir;
  for (const std::string& cmd :
       {"evaluate " + tiny_features() + " --out " + q(dir / "out.h5"), "plan " + tiny_features(),
        "bench block --params " +
            q(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") + " --n-res 8",
        "predict " + q(testing::examples_dir() / "proteins.fasta") + " " + q(dir / "predict") +
            " " + testing::fast_predict_options()}) {
    const auto r = run_on_avx2(cmd + " --precision bf16");
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("--precision bf16: oneDNN has no bf16 matmul on this CPU (effective "
                            "ISA avx2"),
              std::string::npos)
        << cmd << "\n"
        << r.output;
    EXPECT_NE(r.output.find("use --precision fp32 or auto"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
  EXPECT_FALSE(std::filesystem::exists(dir / "predict"));
}

TEST(Precision, AutoRunsFp32WithoutNativeBf16AndSaysWhy) {
  const testing::ScratchDir dir;
  const auto r = run_on_avx2("evaluate " + tiny_features() + " --out " + q(dir / "out.h5") +
                             " --precision auto");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: fp32 (auto: oneDNN's ISA avx2 has no native bf16 matmul)"),
            std::string::npos)
      << r.output;
}

TEST(Precision, UnknownValueIsRefused) {
  const auto r = run_cpufold("evaluate " + tiny_features() + " --out x.h5 --precision fp16");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--precision"), std::string::npos) << r.output;
}

// The plan's weight block is measured from the built model: bf16 packs the trunk's weights in
// half the bytes (the embedders, structure module and heads stay fp32).
TEST(Precision, Bf16RunsAndPlansTheTrunkWeightsSmaller) {
  if (!bf16_support().native) GTEST_SKIP() << "no native bf16 (" << bf16_support().isa << ")";
  const testing::ScratchDir dir;
  const auto r = run_cpufold("evaluate " + tiny_features() + " --out " + q(dir / "out.h5") +
                             " --precision bf16");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: bf16"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.h5"));

  const auto shared_weights = [](const std::string& precision) -> std::int64_t {
    const auto p =
        run_cpufold("plan " + tiny_features() + " --format json --quiet --precision " + precision);
    EXPECT_EQ(p.exit_code, 0) << p.output;
    const auto j = nlohmann::json::parse(p.output.substr(p.output.find('{')));
    for (const auto& b : j["jobs"][0]["blocks"]) {
      if (b["name"].get<std::string>().starts_with("shared weights"))
        return b["bytes"].get<std::int64_t>();
    }
    ADD_FAILURE() << p.output;
    return 0;
  };
  const std::int64_t fp32 = shared_weights("fp32"), bf16 = shared_weights("bf16");
  EXPECT_GT(bf16, 0);
  EXPECT_LT(bf16, fp32);
}

}  // namespace
}  // namespace cpufold
