// The option checks and the CLI's error-to-exit-status mapping, without the binary.
#include "pipeline/cli/option_checks.h"

#include <gtest/gtest.h>

#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>

#include "memory/error.h"
#include "pipeline/cli/cli.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::thrown_message;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(OptionChecks, IntegersAreStrictDecimalWithinRange) {
  EXPECT_EQ(parse_integer("--n", "42", 0, 100), 42);
  EXPECT_EQ(parse_integer("--n", "+7", 0, 100), 7);
  EXPECT_EQ(parse_integer("--n", "010", 0, 100), 10);
  EXPECT_EQ(parse_integer("--n", "-3", -5, 5), -3);
  EXPECT_EQ(
      parse_integer("--n", "9223372036854775807", 0, std::numeric_limits<std::int64_t>::max()),
      std::numeric_limits<std::int64_t>::max());
  for (const char* bad : {"", " 1", "1 ", "5x", "1.5", "1e3", "0x10", "+", "-", "++1"}) {
    const std::string msg = thrown_message<InputError>([&] { parse_integer("--n", bad, 0, 100); });
    EXPECT_TRUE(contains(msg, "--n: '" + std::string(bad) + "' is not an integer")) << msg;
    EXPECT_TRUE(contains(msg, "expected an integer from 0 to 100")) << msg;
  }
  for (const char* bad : {"101", "-1", "99999999999999999999", "-99999999999999999999"}) {
    const std::string msg = thrown_message<InputError>([&] { parse_integer("--n", bad, 0, 100); });
    EXPECT_TRUE(contains(msg, "--n: '" + std::string(bad) + "' is out of range")) << msg;
  }
  const std::string why =
      thrown_message<InputError>([&] { parse_integer("--t", "9", 1, 8, "four per core"); });
  EXPECT_TRUE(contains(why, "from 1 to 8 (four per core)")) << why;
}

TEST(OptionChecks, RealsAreFiniteDecimalWithinRange) {
  EXPECT_DOUBLE_EQ(parse_real("--x", "0.5", 0, 100), 0.5);
  EXPECT_DOUBLE_EQ(parse_real("--x", "1e2", 0, 100), 100);
  EXPECT_DOUBLE_EQ(parse_real("--x", "0", 0, 100), 0);
  for (const char* bad : {"nan", "inf", "-inf", "NaN", "infinity"}) {
    const std::string msg = thrown_message<InputError>([&] { parse_real("--x", bad, 0, 100); });
    EXPECT_TRUE(contains(msg, "is not a finite number")) << msg;
  }
  for (const char* bad : {"", "abc", "0.5x", "0x1p3", " 1"}) {
    const std::string msg = thrown_message<InputError>([&] { parse_real("--x", bad, 0, 100); });
    EXPECT_TRUE(contains(msg, "is not a number: expected a number from 0 to 100")) << msg;
  }
  for (const char* bad : {"-1", "100.5", "1e999"}) {
    const std::string msg = thrown_message<InputError>([&] { parse_real("--x", bad, 0, 100); });
    EXPECT_TRUE(contains(msg, "--x: '" + std::string(bad) + "' is out of range")) << msg;
  }
}

TEST(OptionChecks, ModelOrderIsDistinctModels1To5) {
  EXPECT_EQ(parse_model_order("--model-order", "3,1,2"), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(parse_model_order("--model-order", "5"), (std::vector<int>{5}));
  for (const char* bad : {"", "1,", ",1", "1,,2", "0", "6", "1,x", "1,1", "1;2", "1, 2"}) {
    const std::string msg =
        thrown_message<InputError>([&] { parse_model_order("--model-order", bad); });
    EXPECT_TRUE(contains(msg, "--model-order: '" + std::string(bad) + "'")) << msg;
    EXPECT_TRUE(contains(msg, "1 to 5")) << msg;
  }
}

TEST(OptionChecks, ValidatorsRewriteIntegersInDecimalAndReportTheRange) {
  const CLI::Validator check = integer_in(0, 100);
  std::string text = "010";
  EXPECT_EQ(check(text), "");
  EXPECT_EQ(text, "10");
  std::string bad = "101";
  EXPECT_TRUE(contains(check(bad), "'101' is out of range: expected an integer from 0 to 100"));
  std::string nan = "nan";
  EXPECT_TRUE(contains(real_in(0, 1)(nan), "not a finite number"));
}

TEST(OptionChecks, ThreadLimitIsFourPerHardwareThread) {
  EXPECT_GE(max_threads(), 4);
  std::string too_many = std::to_string(max_threads() + 1);
  EXPECT_FALSE(thread_count()(too_many).empty());
  std::string zero = "0";
  EXPECT_FALSE(thread_count()(zero).empty());
  std::string most = std::to_string(max_threads());
  EXPECT_EQ(thread_count()(most), "");
}

int status_of(const std::exception_ptr& e, std::string& message) {
  std::ostringstream err;
  const int status = report_failure("cpufold x", e, err);
  message = err.str();
  return status;
}

TEST(CliReportFailure, EachKindOfErrorHasItsExitStatus) {
  std::string msg;
  EXPECT_EQ(status_of(std::make_exception_ptr(InputError("bad")), msg), 2);
  EXPECT_EQ(msg, "cpufold x: error: bad\n");
  EXPECT_EQ(status_of(std::make_exception_ptr(WeightsError("w")), msg), 3);
  EXPECT_EQ(status_of(std::make_exception_ptr(BudgetError("b")), msg), 4);
  EXPECT_EQ(status_of(std::make_exception_ptr(std::bad_alloc()), msg), 4);
  EXPECT_TRUE(contains(msg, "out of memory")) << msg;
  EXPECT_EQ(status_of(std::make_exception_ptr(InternalError("broken")), msg), 5);
  EXPECT_EQ(msg, "cpufold x: internal error: broken\n");
  EXPECT_EQ(status_of(std::make_exception_ptr(std::logic_error("oops")), msg), 5);
  EXPECT_TRUE(contains(msg, "internal error: oops")) << msg;
  EXPECT_EQ(status_of(std::make_exception_ptr(42), msg), 5);
  EXPECT_TRUE(contains(msg, "internal error")) << msg;
}

}  // namespace
}  // namespace cpufold
