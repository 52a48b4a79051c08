// OUTPUT_DIR/timings.json: what a run adds, what an earlier run left.
#include "pipeline/batch/timings_file.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using nlohmann::json;
using testing::ScratchDir;
using testing::write_file;

JobTiming one_run() {
  JobTiming t;
  t.length = 12;
  t.msa_rows = 3;
  RunTiming r;
  r.model = "model_3";
  r.seed = 7;
  r.model_seconds = {{"trunk", 1.5}, {"heads", 0.25}};
  r.iterations = 2;
  r.ptm = 0.5;
  r.planned_bytes = std::size_t{3} << 20;
  t.runs.push_back(r);
  return t;
}

TEST(TimingsFile, DoneJobHasItsRunsStagesAndMebibytes) {
  ScratchDir dir;
  TimingsFile file(dir / "timings.json");
  file.job_done("a", one_run());
  file.write();
  const json j = json::parse(testing::read_file(dir / "timings.json"));
  const json& a = j["jobs"]["a"];
  EXPECT_EQ(a["status"], "done");
  EXPECT_EQ(a["length"], 12);
  EXPECT_EQ(a["msa_rows"], 3);
  ASSERT_EQ(a["runs"].size(), 1u);
  EXPECT_EQ(a["runs"][0]["model"], "model_3");
  EXPECT_EQ(a["runs"][0]["seed"], 7);
  EXPECT_DOUBLE_EQ(a["runs"][0]["model_seconds"]["trunk"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(a["runs"][0]["planned_mib"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(a["runs"][0]["ptm"].get<double>(), 0.5);
}

TEST(TimingsFile, KeepsEarlierJobsAndRecordsFailures) {
  ScratchDir dir;
  write_file(dir / "timings.json", R"({"jobs": {"old": {"status": "done"}}})");
  TimingsFile file(dir / "timings.json");
  file.job_failed("new", "bad input");
  file.write();
  const json j = json::parse(testing::read_file(dir / "timings.json"));
  EXPECT_EQ(j["jobs"]["old"]["status"], "done");
  EXPECT_EQ(j["jobs"]["new"], (json{{"status", "failed"}, {"error", "bad input"}}));
}

TEST(TimingsFile, MalformedFileStartsEmpty) {
  ScratchDir dir;
  write_file(dir / "timings.json", "{not json");
  TimingsFile file(dir / "timings.json");
  file.write();
  EXPECT_EQ(json::parse(testing::read_file(dir / "timings.json")),
            (json{{"jobs", json::object()}}));
}

}  // namespace
}  // namespace cpufold
