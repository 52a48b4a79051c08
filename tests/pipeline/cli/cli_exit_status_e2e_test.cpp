// The exit statuses of the `cpufold` binary (README's "Exit status" table): 0 success, 2 usage
// or input error, 3 weights, 4 memory, 5 internal error; and messages a new user can act on.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/io/params_test_helpers.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_command;
using testing::run_cpufold;

std::string tiny_params(const char* preset) {
  return (testing::test_data_dir() / "params" / (std::string("params_") + preset + ".npz"))
      .string();
}

struct UsageCase {
  std::string args;
  std::vector<std::string> expected;  // substrings of the output
};

TEST(CliExitStatusE2eTest, EveryUsageErrorExits2WithAPlainMessageAndAHint) {
  const std::vector<UsageCase> cases = {
      {"", {"cpufold: error: a command is required", "predict", "cpufold --help"}},
      {"fold x",
       {"unknown command 'fold'", "info, convert-params, evaluate, predict, plan, profile, bench",
        "Run 'cpufold --help'"}},
      {"--bogus", {"unknown option '--bogus'", "cpufold --help"}},
      {"predict", {"cpufold predict: error: INPUT is required", "cpufold predict --help"}},
      {"predict in", {"OUTPUT_DIR is required", "Usage: cpufold predict [OPTIONS] INPUT"}},
      {"predict in out extra", {"unexpected argument 'extra'"}},
      {"predict in out --bogus", {"unknown option '--bogus'", "cpufold predict --help"}},
      {"predict in out --threads", {"--threads needs a value"}},
      {"predict in out --threads 1 --threads 2", {"--threads was given more than once"}},
      {"predict in out --quiet=maybe", {"--quiet is a flag and takes no value (given 'maybe')"}},
      {"predict -- in out extra", {"unexpected argument 'extra'"}},
      {"predict in out --mem-budget 1" + std::string(400, '0'), {"is out of range"}},
      {"bench", {"cpufold bench: error: a command is required", "block, calibrate, features"}},
      {"bench foo", {"unknown command 'foo'", "block", "cpufold bench --help"}},
      {"bench features --n-res", {"--n-res needs a value"}},
      {"evaluate", {"cpufold evaluate: error: --params is required"}},
      {"info", {"cpufold info: error: PARAMS is required"}},
      {"info a b", {"unexpected argument 'b'"}},
      {"convert-params in.npz", {"OUT is required"}},
  };
  for (const UsageCase& c : cases) {
    const auto r = run_cpufold(c.args);
    EXPECT_EQ(r.exit_code, 2) << "cpufold " << c.args << ":\n" << r.output;
    for (const std::string& text : c.expected) {
      EXPECT_TRUE(contains(r.output, text)) << "cpufold " << c.args << ": no '" << text << "' in\n"
                                            << r.output;
    }
    EXPECT_FALSE(contains(r.output, "Run with --help")) << "CLI11's own wording:\n" << r.output;
  }
}

// The codes listed in the EXIT STATUS section of a --help output.
std::set<int> help_exit_codes(const std::string& help) {
  std::set<int> codes;
  const std::size_t at = help.find("EXIT STATUS");
  if (at == std::string::npos) return codes;
  static const std::regex row(R"(^  ([0-9]+)  )");
  std::istringstream lines(help.substr(at));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && !line.empty()) {
    std::smatch m;
    if (std::regex_search(line, m, row)) codes.insert(std::stoi(m[1]));
  }
  return codes;
}

// The codes in README's "## Exit status" table.
std::set<int> readme_exit_codes() {
  const std::string readme =
      testing::read_file(testing::test_data_dir().parent_path().parent_path() / "README.md");
  std::set<int> codes;
  const std::size_t at = readme.find("\n## Exit status\n");
  if (at == std::string::npos) return codes;
  static const std::regex row(R"(^\| ([0-9]+) \|)");
  std::istringstream lines(readme.substr(at + 1));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && line.rfind("## ", 0) != 0) {
    std::smatch m;
    if (std::regex_search(line, m, row)) codes.insert(std::stoi(m[1]));
  }
  return codes;
}

TEST(CliExitStatusE2eTest, HelpAndVersionExit0AndEveryHelpListsTheReadmeTable) {
  const std::set<int> table = readme_exit_codes();
  EXPECT_EQ(table, (std::set<int>{0, 2, 3, 4, 5, 6}));
  for (const char* command : {"", "info ", "convert-params ", "evaluate ", "predict ", "bench ",
                              "bench block ", "bench features "}) {
    const auto r = run_cpufold(std::string(command) + "--help");
    EXPECT_EQ(r.exit_code, 0) << command << r.output;
    EXPECT_EQ(help_exit_codes(r.output), table) << command << "--help:\n" << r.output;
    EXPECT_TRUE(contains(r.output, "never exits with 1")) << command;
  }
  const auto v = run_cpufold("--version");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_TRUE(contains(v.output, "cpufold ")) << v.output;
}

TEST(CliExitStatusE2eTest, Exit0WhenTheCommandSucceeds) {
  const auto r = run_cpufold("info " + tiny_params("model_3_ptm"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliExitStatusE2eTest, Exit2ForUnreadableInput) {
  testing::ScratchDir dir;
  const auto r = run_cpufold("predict '" + (dir / "missing.fasta").string() + "' '" +
                             (dir / "out").string() + "' " + testing::fast_predict_options("3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "missing.fasta")) << r.output;
}

TEST(CliExitStatusE2eTest, Exit3ForAParameterFileThatIsNotOne) {
  testing::ScratchDir dir;
  testing::write_file(dir / "params_model_1_ptm.npz", "not a zip\n");
  const auto r = run_cpufold("info '" + (dir / "params_model_1_ptm.npz").string() + "'");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "params_model_1_ptm.npz")) << r.output;
}

// An address-space limit far below what the run needs: the allocation fails cleanly.
std::string with_memory_limit(const std::string& args) {
  return "bash -c \"ulimit -v 1500000; OMP_NUM_THREADS=1 '" + std::string(CPUFOLD_BINARY) + "' " +
         args + "\"";
}

TEST(CliExitStatusE2eTest, Exit4WhenTheRunDoesNotFitInMemory) {
  CPUFOLD_SKIP_UNDER_ASAN_ULIMIT();
  const auto r =
      run_command(with_memory_limit("bench block --params '" + tiny_params("model_3_ptm") +
                                    "' --n-res 4000 --msa-rows 20000 --threads 1"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "cpufold bench block: error: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "bytes")) << r.output;
}

TEST(CliExitStatusE2eTest, BenchFeaturesTooLargeIsRefusedBeforeItAllocates) {
  CPUFOLD_SKIP_UNDER_ASAN_ULIMIT();
  // Under the address-space limit a run that allocates first ends in bad_alloc with the
  // chunk-size advice instead: the message tells the two apart.
  const auto r =
      run_command(with_memory_limit("bench features --n-res 1000000 --msa-rows 1000000"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "cpufold bench features: error: bench features needs about"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "pass a smaller --n-res or --msa-rows")) << r.output;
}

TEST(CliExitStatusE2eTest, PredictExits4WhenEveryFailedJobRanOutOfMemory) {
  CPUFOLD_SKIP_UNDER_ASAN_ULIMIT();
  testing::ScratchDir dir;
  std::string long_sequence;
  for (int i = 0; i < 3000; ++i) long_sequence += "ACDEFGHIKLMNPQRSTVWY"[(i * 7) % 20];
  testing::write_file(dir / "q.fasta", ">short\nMKTAYIAKQRQISFVK\n>long\n" + long_sequence + "\n");
  const fs::path out = dir / "out";
  const auto r =
      run_command(with_memory_limit("predict '" + (dir / "q.fasta").string() + "' '" +
                                    out.string() + "' " + testing::fast_predict_options("3")));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "failed long: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 2 job(s) ran out of memory")) << r.output;
  EXPECT_TRUE(fs::exists(out / "short.done.txt")) << "the job that fits is still folded";

  // A bad-input failure in the same batch makes it a status 2.
  testing::write_file(dir / "q.fasta", ">long\n" + long_sequence + "\n>bad\nMKTA1K\n");
  const auto mixed =
      run_command(with_memory_limit("predict '" + (dir / "q.fasta").string() + "' '" +
                                    out.string() + "' " + testing::fast_predict_options("3")));
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
}

// Finite weights whose activations overflow fp32 (every weight of entry 0, preprocess_1d, at
// 3e38): evaluate refuses to write non-finite outputs, which only a bug or such weights make.
TEST(CliExitStatusE2eTest, Exit5WhenEvaluateWouldWriteNonFiniteOutputs) {
  testing::ScratchDir dir;
  std::vector<std::pair<std::size_t, float>> huge;
  for (std::size_t i = 0; i < 22 * 32; ++i) huge.emplace_back(i, 3e38f);
  const fs::path params = dir / "params_model_1_ptm.npz";
  testing::write_npz_with_values(tiny_params("model_1_ptm"), params, 0, huge);
  const auto r = run_cpufold(
      "evaluate --params '" + params.string() + "' --features '" +
      (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5").string() +
      "' --out '" + (dir / "o.h5").string() + "' --recycles 0 --threads 1");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_TRUE(contains(r.output, "cpufold evaluate: internal error: ")) << r.output;
}

TEST(CliExitStatusE2eTest, OutputPathsOfTheWrongKindAreRefusedBeforeAnyWorkAndLeaveNothing) {
  testing::ScratchDir dir;
  fs::create_directory(dir / "existing");
  testing::write_file(dir / "file", "x");
  const std::string features =
      (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5").string();
  const auto evaluate =
      run_cpufold("evaluate --params '" + tiny_params("model_1_ptm") + "' --features '" + features +
                  "' --out '" + (dir / "existing").string() + "' --recycles 0 --threads 1");
  EXPECT_EQ(evaluate.exit_code, 2) << evaluate.output;
  EXPECT_TRUE(contains(evaluate.output, "is a directory: give a file name")) << evaluate.output;
  const auto profile = run_cpufold("profile --params '" + tiny_params("model_3_ptm") +
                                   "' --lengths 16 --out '" + (dir / "file").string() + "'");
  EXPECT_EQ(profile.exit_code, 2) << profile.output;
  EXPECT_TRUE(contains(profile.output, "exists and is not a directory")) << profile.output;
  EXPECT_FALSE(contains(profile.output, "filesystem error")) << profile.output;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename());
  EXPECT_EQ(left.size(), 2u) << "a temporary was left beside the outputs";
}

}  // namespace
}  // namespace cpufold
