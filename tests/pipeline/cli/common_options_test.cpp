#include "pipeline/cli/common_options.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpufold {
namespace {

// Parses `args` with a command that registered `which`; false when CLI11 refused them.
bool parse(std::vector<std::string> args, CommonOptions& into,
           std::initializer_list<CommonOption> which) {
  CLI::App app("test");
  add_common_options(app, into, which);
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

TEST(CommonOptions, BothOptionsBindToTheSharedStruct) {
  CommonOptions o;
  ASSERT_TRUE(parse({"--threads", "2", "--chunk-size", "16"}, o,
                    {CommonOption::threads, CommonOption::chunk_size}));
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.chunk_size, 16);
}

TEST(CommonOptions, RangesComeFromOptionChecks) {
  CommonOptions o;
  EXPECT_FALSE(parse({"--chunk-size", "-1"}, o, {CommonOption::chunk_size}));
  EXPECT_FALSE(parse({"--threads", "0"}, o, {CommonOption::threads}));
  EXPECT_FALSE(parse({"--threads", "1e9"}, o, {CommonOption::threads}));
}

TEST(CommonOptions, OnlyTheListedOptionsAreRegistered) {
  CommonOptions o;
  EXPECT_TRUE(parse({"--threads", "1"}, o, {CommonOption::threads}));
  EXPECT_FALSE(parse({"--chunk-size", "8"}, o, {CommonOption::threads}));
}

}  // namespace
}  // namespace cpufold
