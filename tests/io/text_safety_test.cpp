// Text from users made safe for JSON, logs, terminals and file names.
#include "io/text_safety.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace cpufold {
namespace {

using text::safe_text;

TEST(TextSafetyTest, KeepsValidUtf8AndPrintableAscii) {
  const std::string text = "q1 |caf\xC3\xA9| \xE2\x86\x92 \xF0\x9F\xA7\xAC (x)";
  EXPECT_EQ(safe_text(text), text);
  EXPECT_TRUE(text::is_valid_utf8(text));
}

TEST(TextSafetyTest, ShowsInvalidBytesAsHex) {
  EXPECT_EQ(safe_text("h\xFF\xFE"), "h\\xFF\\xFE");
  EXPECT_EQ(safe_text("\x80x"), "\\x80x");                           // stray continuation byte
  EXPECT_EQ(safe_text("\xC3"), "\\xC3");                             // sequence cut short
  EXPECT_EQ(safe_text("\xC0\xAF"), "\\xC0\\xAF");                    // overlong '/'
  EXPECT_EQ(safe_text("\xE0\x80\xAF"), "\\xE0\\x80\\xAF");           // overlong 3-byte
  EXPECT_EQ(safe_text("\xED\xA0\x80"), "\\xED\\xA0\\x80");           // UTF-16 surrogate
  EXPECT_EQ(safe_text("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_FALSE(text::is_valid_utf8("h\xFF"));
}

TEST(TextSafetyTest, EscapesControlCharacters) {
  EXPECT_EQ(safe_text(std::string("a\tb\nc\rd\0e\x1B[31m\x7F", 15)),
            "a\\tb\\nc\\rd\\x00e\\x1B[31m\\x7F");
  EXPECT_EQ(safe_text("x\xC2\x9B"
                      "1m"),
            "x\\u009B1m");  // C1 CSI
}

TEST(TextSafetyTest, EveryByteStringBecomesJsonThatSerializes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  all += "\xE2\x82";  // cut at the end
  const std::string safe = safe_text(all);
  EXPECT_TRUE(text::is_valid_utf8(safe));
  for (char c : safe) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << safe;
  nlohmann::json j;
  j["error"] = safe;
  EXPECT_NO_THROW((void)j.dump());
  nlohmann::json raw;
  raw["error"] = all;
  EXPECT_THROW((void)raw.dump(), nlohmann::json::type_error) << "the reason safe_text exists";
}

TEST(TextSafetyTest, PrefixNeverCutsACharacter) {
  const std::string text = "ab\xC3\xA9\xE2\x86\x92";  // a b é →
  EXPECT_EQ(text::utf8_prefix(text, 3), "ab");
  EXPECT_EQ(text::utf8_prefix(text, 4), "ab\xC3\xA9");
  EXPECT_EQ(text::utf8_prefix(text, 6), "ab\xC3\xA9");
  EXPECT_EQ(text::utf8_prefix(text, 7), text);
  EXPECT_EQ(text::utf8_prefix("a\xFF\xFF", 2), "a\xFF");  // malformed bytes are single bytes
  EXPECT_EQ(text::excerpt("abcdef", 3), "abc...");
  EXPECT_EQ(text::excerpt("abc", 3), "abc");
}

TEST(TextSafetyTest, Fnv1aIsTheStandardHash) {
  EXPECT_EQ(text::fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(text::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace cpufold
