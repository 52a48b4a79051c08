// Progress of a predict batch: clock times, the time-left estimate and the appended log.
#include "pipeline/batch/batch_progress.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(BatchProgressTest, ClockTime) {
  EXPECT_EQ(clock_time(0), "0:00");
  EXPECT_EQ(clock_time(7.4), "0:07");
  EXPECT_EQ(clock_time(754), "12:34");
  EXPECT_EQ(clock_time(3723), "1:02:03");
  EXPECT_EQ(clock_time(-3), "0:00");
}

TEST(BatchProgressTest, EstimateScalesMeasuredRate) {
  TimeEstimate e;
  e.plan(100);  // run 1
  e.plan(400);  // run 2, twice as long a query
  EXPECT_LT(e.remaining(0, 0), 0) << "nothing measured yet";
  e.finished(100, 2.0);  // 0.02 s per unit
  EXPECT_NEAR(e.remaining(0, 0), 8.0, 1e-9);
  EXPECT_NEAR(e.remaining(400, 3.0), 5.0, 1e-9);   // run 2 under way for 3 s
  EXPECT_NEAR(e.remaining(400, 20.0), 0.0, 1e-9);  // slower than estimated: never negative
  e.drop(400);                                     // run 2's job failed
  EXPECT_NEAR(e.remaining(0, 0), 0.0, 1e-9);
}

TEST(BatchProgressTest, LogAppendsTimestampedLinesAndForwardsThem) {
  testing::ScratchDir dir;
  testing::write_file(dir / "log.txt", "earlier run\n");
  std::vector<std::string> seen;
  {
    BatchLog log(dir / "log.txt", [&](const std::string& line) { seen.push_back(line); });
    log.say("first");
    log.say("second");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "second"}));
  const std::string text = testing::read_file(dir / "log.txt");
  EXPECT_EQ(text.rfind("earlier run\n", 0), 0u) << text;
  EXPECT_NE(text.find(" first\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" second\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace cpufold
