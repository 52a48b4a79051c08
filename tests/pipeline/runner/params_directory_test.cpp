// --data: AF2's params/params_model_N[_ptm].{h5,npz} layout.
#include "pipeline/runner/params_directory.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::write_file;

TEST(ParamsDirectoryTest, FindsNpzUnderParams) {
  ScratchDir dir;
  fs::create_directories(dir / "params");
  write_file(dir / "params" / "params_model_3_ptm.npz", "x");
  write_file(dir / "params" / "params_model_3.npz", "x");
  EXPECT_EQ(find_params(dir.path(), 3, ModelType::alphafold2_ptm),
            dir / "params" / "params_model_3_ptm.npz");
  EXPECT_EQ(find_params(dir.path(), 3, ModelType::alphafold2),
            dir / "params" / "params_model_3.npz");
}

TEST(ParamsDirectoryTest, PrefersConvertedH5) {
  ScratchDir dir;
  fs::create_directories(dir / "params");
  write_file(dir / "params" / "params_model_1_ptm.npz", "x");
  write_file(dir / "params" / "params_model_1_ptm.h5", "x");
  EXPECT_EQ(find_params(dir.path(), 1, ModelType::alphafold2_ptm),
            dir / "params" / "params_model_1_ptm.h5");
}

TEST(ParamsDirectoryTest, AcceptsFilesDirectlyInData) {
  ScratchDir dir;
  write_file(dir / "params_model_2_ptm.npz", "x");
  EXPECT_EQ(find_params(dir.path(), 2, ModelType::alphafold2_ptm), dir / "params_model_2_ptm.npz");
}

TEST(ParamsDirectoryTest, TheShippedTestWeightsAreFound) {
  EXPECT_EQ(find_params(testing::test_data_dir(), 1, ModelType::alphafold2_ptm),
            testing::test_data_dir() / "params" / "params_model_1_ptm.npz");
}

TEST(ParamsDirectoryTest, MissingFileNamesTheExactPathAndHowToGetIt) {
  ScratchDir dir;
  const std::string message = testing::thrown_message<WeightsError>(
      [&] { find_params(dir.path(), 4, ModelType::alphafold2_ptm); });
  EXPECT_NE(message.find((dir / "params" / "params_model_4_ptm.npz").string()), std::string::npos)
      << message;
  EXPECT_NE(message.find("alphafold_params_2022-12-06.tar"), std::string::npos) << message;
  EXPECT_NE(message.find("CC BY 4.0"), std::string::npos) << message;
  EXPECT_NE(message.find("convert-params"), std::string::npos) << message;
}

TEST(ParamsDirectoryTest, ModelTypes) {
  EXPECT_EQ(parse_model_type("auto"), ModelType::alphafold2_ptm);
  EXPECT_EQ(parse_model_type("alphafold2"), ModelType::alphafold2);
  EXPECT_EQ(model_type_name(ModelType::alphafold2_ptm), "alphafold2_ptm");
  const std::string message =
      testing::thrown_message<InputError>([] { parse_model_type("alphafold2_multimer_v3"); });
  EXPECT_NE(message.find("multimer not supported yet"), std::string::npos);
}

TEST(ParamsDirectoryTest, DefaultDataDirComesFromTheEnvironment) {
  const char* old = std::getenv("CPUFOLD_DATA");
  const std::string saved = old ? old : "";
  ::setenv("CPUFOLD_DATA", "/some/where", 1);
  EXPECT_EQ(default_data_dir(), fs::path("/some/where"));
  ::unsetenv("CPUFOLD_DATA");
  const fs::path fallback = default_data_dir();
  EXPECT_EQ(fallback.filename(), "colabfold");
  if (old) ::setenv("CPUFOLD_DATA", saved.c_str(), 1);
}

}  // namespace
}  // namespace cpufold
