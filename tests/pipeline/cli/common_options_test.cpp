#include "pipeline/cli/common_options.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpufold {
namespace {

// Parses `args` for `command` (and `extra` registrations); false when CLI11 refused them.
bool parse(std::vector<std::string> args, CommonOptions& into, Command command,
           const std::function<void(CLI::App&)>& extra = {}, CLI::App* keep = nullptr) {
  CLI::App local("test");
  CLI::App& app = keep != nullptr ? *keep : local;
  add_common_options(app, into, command);
  if (extra) extra(app);
  args.insert(args.begin(), "test");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const std::exception&) {  // CLI11's ValidationError or an InputError
    return false;
  }
  return true;
}

TEST(CommonOptions, OptionsBindToTheSharedRunOptions) {
  CommonOptions o;
  ASSERT_TRUE(parse({"--threads", "2", "--chunk-size", "16", "--mem-budget", "1G", "--params",
                     "p.npz", "--precision", "fp32"},
                    o, Command::evaluate));
  EXPECT_EQ(o.run.threads, 2);
  EXPECT_EQ(o.run.chunks, ChunkSizes::all(16));
  EXPECT_EQ(o.run.uniform_chunk(), 16);
  EXPECT_EQ(o.run.mem_budget, std::size_t{1} << 30);
  EXPECT_EQ(o.params, "p.npz");
}

TEST(CommonOptions, RangesComeFromOptionChecks) {
  CommonOptions o;
  EXPECT_FALSE(parse({"--params", "p", "--chunk-size", "-1"}, o, Command::evaluate));
  EXPECT_FALSE(parse({"--params", "p", "--threads", "0"}, o, Command::evaluate));
  EXPECT_FALSE(parse({"--params", "p", "--threads", "1e9"}, o, Command::evaluate));
}

TEST(CommonOptions, EachCommandTakesItsRowsOfTheTable) {
  CommonOptions o;
  EXPECT_TRUE(parse({"--threads", "1"}, o, Command::bench_features));
  EXPECT_FALSE(parse({"--chunk-size", "8"}, o, Command::bench_features));
  EXPECT_FALSE(parse({"--params", "p", "--mem-budget", "1G"}, o, Command::bench_block));
  EXPECT_TRUE(parse({"--mem-budget", "1G"}, o, Command::predict));
}

TEST(CommonOptions, ParamsAreRequiredWhereACommandNeedsThem) {
  CommonOptions o;
  EXPECT_FALSE(parse({}, o, Command::evaluate));
  EXPECT_FALSE(parse({}, o, Command::profile));
  EXPECT_TRUE(parse({}, o, Command::plan));  // plan takes them only with --features
  EXPECT_FALSE(parse({"--params", "p"}, o, Command::predict));  // predict finds them in --data
}

TEST(CommonOptions, AHiddenAliasSetsTheSameValueWithTheSameChecks) {
  std::int64_t rows = 0;
  auto add_rows = [&rows](CLI::App& app) {
    app.add_option("--msa-rows", rows)->check(CLI::Range(1, 100));
    add_hidden_alias(app, "--n-seq", "--msa-rows");
  };
  CommonOptions o;
  ASSERT_TRUE(parse({"--n-seq", "42"}, o, Command::bench_features, add_rows));
  EXPECT_EQ(rows, 42);
  EXPECT_FALSE(parse({"--n-seq", "1000"}, o, Command::bench_features, add_rows));
  CLI::App app("test");
  add_rows(app);
  EXPECT_EQ(app.help().find("--n-seq"), std::string::npos) << app.help();
}

TEST(CommonOptions, GivenOptionsAreRepeatedForAChild) {
  CommonOptions o;
  CLI::App app("test");
  ASSERT_TRUE(parse({"--params", "p.npz", "--mem-budget", "1K", "--precision", "fp32"}, o,
                    Command::profile, {}, &app));
  const std::vector<std::string> expected = {"--params", "p.npz",       "--mem-budget",
                                             "1024",     "--precision", "fp32"};
  EXPECT_EQ(common_option_args(app), expected);
  CommonOptions child;
  std::vector<std::string> args = common_option_args(app);
  ASSERT_TRUE(parse(args, child, Command::profile));
  EXPECT_EQ(child.run.mem_budget, 1024u);
  EXPECT_EQ(child.params, "p.npz");
}

}  // namespace
}  // namespace cpufold
