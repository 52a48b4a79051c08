// The `cpufold` binary as a user runs it: output, exit codes and error messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::run_cpufold;

std::string tiny_params(const char* preset) {
  return (testing::test_data_dir() / "params" / (std::string("params_") + preset + ".npz"))
      .string();
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(CliInfo, PrintsDetectedConfigurationOfTinyModel1) {
  const auto r = run_cpufold("info " + tiny_params("model_1_ptm"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "preset:               model_1_ptm")) << r.output;
  EXPECT_TRUE(contains(r.output, "templates:            on")) << r.output;
  EXPECT_TRUE(contains(r.output, "c_m 32, c_z 16, c_s 32, c_e 8, c_t 8")) << r.output;
  EXPECT_TRUE(contains(r.output, "evoformer blocks:     2")) << r.output;
}

TEST(CliInfo, JsonOutputForModel3HasNoTemplates) {
  const auto r = run_cpufold("info --json " + tiny_params("model_3_ptm") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["preset"], "model_3_ptm");
  EXPECT_EQ(j["templates"], false);
  EXPECT_EQ(j["ptm_head"], true);
  EXPECT_EQ(j["template_blocks"], 0);
  EXPECT_EQ(j["extra_msa_blocks"], 1);
}

TEST(CliConvertParams, ConvertedFileReportsTheSameModel) {
  testing::ScratchDir dir;
  const std::string out = (dir / "params_model_1_ptm.h5").string();
  const auto conv = run_cpufold("convert-params " + tiny_params("model_1_ptm") + " " + out);
  ASSERT_EQ(conv.exit_code, 0) << conv.output;
  EXPECT_TRUE(contains(conv.output, "preset model_1_ptm")) << conv.output;

  const auto from_npz = run_cpufold("info --json " + tiny_params("model_1_ptm"));
  const auto from_h5 = run_cpufold("info --json " + out);
  ASSERT_EQ(from_h5.exit_code, 0) << from_h5.output;
  EXPECT_EQ(nlohmann::json::parse(from_h5.output), nlohmann::json::parse(from_npz.output));
  // Only the final file is left: the temporary is renamed into place.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator{}),
            1);
}

TEST(CliErrors, MissingParameterFileExitsWithWeightsErrorNamingIt) {
  const auto r = run_cpufold("info /nonexistent/params_model_1.npz");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "/nonexistent/params_model_1.npz")) << r.output;
}

TEST(CliErrors, FileThatIsNotParametersIsRefused) {
  testing::ScratchDir dir;
  testing::write_file(dir / "notes.txt", "these are not weights\n");
  const auto r = run_cpufold("info " + (dir / "notes.txt").string());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "notes.txt")) << r.output;
}

TEST(CliErrors, ConvertingAnHdf5FileAgainIsAnInputError) {
  testing::ScratchDir dir;
  const std::string h5 = (dir / "p.h5").string();
  ASSERT_EQ(run_cpufold("convert-params " + tiny_params("model_3_ptm") + " " + h5).exit_code, 0);
  const auto r = run_cpufold("convert-params " + h5 + " " + (dir / "q.h5").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "convert-params reads .npz")) << r.output;
}

TEST(CliErrors, NoSubcommandIsAUsageError) {
  const auto r = run_cpufold("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "info")) << r.output;
}

}  // namespace
}  // namespace cpufold
