// OUTPUT_DIR/timings.json: what a run adds, what an earlier run left.
#include "pipeline/batch/timings_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "memory/error.h"

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

TEST(TimingsFile, OneLinePerJobAndEarlierFormatsAreReadWhole) {
  ScratchDir dir;
  // Indented, as cpufold wrote it before: read whole once, then rewritten a job per line.
  write_file(dir / "timings.json",
             "{\n  \"jobs\": {\n    \"old\": {\n      \"status\": \"done\"\n    }\n  }\n}\n");
  TimingsFile file(dir / "timings.json");
  EXPECT_EQ(file.recorded_jobs(), (std::set<std::string>{"old"}));
  file.job_done("a", one_run());
  file.job_failed("b \"quoted\"", "bad input");
  file.write();
  const std::string text = testing::read_file(dir / "timings.json");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7) << text;
  const json j = json::parse(text);
  EXPECT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"]["old"]["status"], "done");
  EXPECT_EQ(j["jobs"]["b \"quoted\""]["error"], "bad input");
  EXPECT_EQ(TimingsFile(dir / "timings.json").recorded_jobs(),
            (std::set<std::string>{"old", "a", "b \"quoted\""}));
}

TEST(TimingsFile, WrittenRecordsLeaveMemoryAndLaterWritesKeepThem) {
  ScratchDir dir;
  TimingsFile file(dir / "timings.json");
  file.job_done("a", one_run());
  file.write();
  file.job_failed("b", "bad input");
  file.write();
  file.job_done("b", one_run());  // a retried job replaces its record in place
  file.write();
  const json j = json::parse(testing::read_file(dir / "timings.json"));
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"]["a"]["status"], "done");
  EXPECT_EQ(j["jobs"]["b"]["status"], "done");
  EXPECT_EQ(j["jobs"].begin().key(), "a");
}

TEST(TimingsFile, JobsDoneByAKilledRunComeBackFromTheirOwnRecords) {
  ScratchDir dir;
  TimingsFile own(dir / "logs-a.json");
  own.job_done("a", one_run());
  own.write();
  TimingsFile file(dir / "timings.json");
  file.job_done("b", one_run());
  file.write();
  TimingsFile rerun(dir / "timings.json");
  const auto own_record = [&](const std::string& job) { return dir / ("logs-" + job + ".json"); };
  EXPECT_EQ(rerun.recover({"a", "b", "c"}, own_record), 1u);  // b is there, c left none
  rerun.write();
  const json j = json::parse(testing::read_file(dir / "timings.json"));
  EXPECT_EQ(j["jobs"]["a"]["length"], 12);
  EXPECT_EQ(j["jobs"].size(), 2u);
}

TEST(TimingsFile, AWriteThatFailsKeepsTheRecordsForTheNextOne) {
  ScratchDir dir;
  TimingsFile file(dir / "gone" / "timings.json");
  file.job_done("a", one_run());
  EXPECT_THROW(file.write(), InputError);
  std::filesystem::create_directory(dir / "gone");
  file.write();
  EXPECT_EQ(json::parse(testing::read_file(dir / "gone" / "timings.json"))["jobs"]["a"]["status"],
            "done");
}

}  // namespace
}  // namespace cpufold
