// Line splitting shared by the input parsers: every line-end convention and a BOM.
#include "io/text_input.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

std::vector<std::pair<std::size_t, std::string>> lines_of(std::string_view text) {
  std::vector<std::pair<std::size_t, std::string>> out;
  text::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) out.emplace_back(lines.number(), std::string(line));
  return out;
}

using Numbered = std::vector<std::pair<std::size_t, std::string>>;

TEST(TextInputTest, SplitsLfCrlfAndLoneCrTheSame) {
  const Numbered expected = {{1, ">a"}, {2, "MK"}, {3, ""}, {4, "TA"}};
  EXPECT_EQ(lines_of(">a\nMK\n\nTA\n"), expected);
  EXPECT_EQ(lines_of(">a\r\nMK\r\n\r\nTA\r\n"), expected);
  EXPECT_EQ(lines_of(">a\rMK\r\rTA\r"), expected);
  EXPECT_EQ(lines_of(">a\rMK\r\n\nTA"), expected);  // mixed, no final line end
}

TEST(TextInputTest, SkipsAUtf8ByteOrderMarkAtTheStartOnly) {
  const Numbered expected = {{1, ">a"}, {2, "\xEF\xBB\xBFMK"}};
  EXPECT_EQ(lines_of("\xEF\xBB\xBF>a\n\xEF\xBB\xBFMK"), expected);
  EXPECT_TRUE(lines_of("\xEF\xBB\xBF").empty());
}

TEST(TextInputTest, RefusesUtf16AndUtf32NamingTheEncoding) {
  const auto error = [](std::string_view text) {
    return testing::thrown_message<InputError>([&] { text::check_text_encoding(text, "q.fasta"); });
  };
  EXPECT_NE(error(std::string_view("\xFF\xFE>\0a\0", 6)).find("q.fasta:1: the file is UTF-16"),
            std::string::npos);
  EXPECT_NE(error(std::string_view("\xFE\xFF\0>", 4)).find("UTF-16"), std::string::npos);
  EXPECT_NE(error(std::string_view("\xFF\xFE\0\0>\0\0\0", 8)).find("UTF-32"), std::string::npos);
  EXPECT_NO_THROW(text::check_text_encoding("\xEF\xBB\xBF>a\n", "q.fasta"));
}

}  // namespace
}  // namespace cpufold
