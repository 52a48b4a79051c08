#include "memory/byte_size.h"

#include <gtest/gtest.h>

#include "memory/error.h"

namespace cpufold {
namespace {

TEST(ByteSize, ParsesBinaryUnitsAsSlurmAndNumfmtDo) {
  EXPECT_EQ(parse_byte_size("1.5G", "--mem-budget"), 1610612736u);
  EXPECT_EQ(parse_byte_size("800M", "--mem-budget"), 800u << 20);
  EXPECT_EQ(parse_byte_size("2GiB", "--mem-budget"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("64k", "--mem-budget"), 64u << 10);
  EXPECT_EQ(parse_byte_size("1T", "--mem-budget"), 1ull << 40);
  EXPECT_EQ(parse_byte_size("4096", "--mem-budget"), 4096u);
  EXPECT_EQ(parse_byte_size("512MB", "--mem-budget"), 512u << 20);
}

TEST(ByteSize, RefusesWhatIsNotASizeNamingTheOption) {
  for (const char* bad :
       {"", "G", "1.5X", "-1G", "1..5G", "1.5 G", "1GG", "1e9", "0", "0M", "99999999999T"}) {
    try {
      parse_byte_size(bad, "--mem-budget");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--mem-budget"), std::string::npos) << e.what();
    }
  }
}

TEST(ByteSize, ANumberPastTheRangeOfADoubleIsOutOfRangeNotAnInternalError) {
  const std::string huge = "1" + std::string(400, '0');
  for (const std::string& text :
       {huge, huge + "G", std::string("9000000000P"), std::string("8E")}) {
    try {
      parse_byte_size(text, "--mem-budget");
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text.size() > 24 ? "out of range" : "--mem-budget"),
                std::string::npos)
          << e.what();
      EXPECT_LT(std::string(e.what()).size(), 200u) << "quotes all 400 digits: " << e.what();
    }
  }
}

TEST(ByteSize, FormatsWithThreeSignificantFigures) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(100u << 20), "100 MiB");
  EXPECT_EQ(format_bytes(1610612736), "1.50 GiB");
  EXPECT_EQ(format_bytes(25u << 20), "25.0 MiB");
}

TEST(ByteSize, SlurmMemRoundsUpToWholeMebibytes) {
  EXPECT_EQ(slurm_mem(1u << 20), "1M");
  EXPECT_EQ(slurm_mem((1u << 20) + 1), "2M");
  EXPECT_EQ(slurm_mem(1610612736), "1536M");
}

}  // namespace
}  // namespace cpufold
