// What `cpufold plan` prints for a plan: a budget larger than the machine does not hide that
// the run may be killed.
#include "pipeline/batch/plan_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pipeline/batch/plan_jobs.h"

namespace cpufold {
namespace {

JobPlan planned(std::size_t peak, std::size_t budget, std::size_t usable) {
  JobPlan j;
  j.name = "q";
  j.model = "model_3";
  j.n_res = 100;
  j.plan.dram_peak_bytes = peak;
  j.plan.min_budget_bytes = peak;
  j.plan.budget = budget;
  j.plan.usable_bytes = usable;
  j.plan.fits = peak <= budget;
  return j;
}

TEST(PlanReport, FitsABudgetAboveTheMachineButSaysTheRunMayBeKilled) {
  const JobPlan j = planned(std::size_t{40} << 30, std::size_t{10} << 40, std::size_t{20} << 30);
  const std::string text = plan_text({&j, 1});
  EXPECT_NE(text.find("fits the budget 10.0 TiB"), std::string::npos) << text;
  EXPECT_NE(text.find("but the peak is more than the 20.0 GiB of memory available now: the run "
                      "may be killed"),
            std::string::npos)
      << text;
  const auto json = nlohmann::json::parse(plan_json({&j, 1}));
  EXPECT_EQ(json["jobs"][0]["above_available_memory"], true) << json.dump();
}

TEST(PlanReport, APlanWithinTheMachineSaysNothingMore) {
  const JobPlan j = planned(std::size_t{4} << 30, std::size_t{10} << 40, std::size_t{20} << 30);
  const std::string text = plan_text({&j, 1});
  EXPECT_EQ(text.find("may be killed"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(plan_json({&j, 1}))["jobs"][0]["above_available_memory"], false);
}

TEST(PlanReport, ASpilledPlanSaysItsPredictedSlowdownAndTraffic) {
  JobPlan j = planned(std::size_t{1} << 30, std::size_t{2} << 30, std::size_t{20} << 30);
  j.plan.chosen.spill = {{"activations arena", std::size_t{3} << 30}};
  j.plan.spill_bytes = std::size_t{3} << 30;
  j.plan.chosen.spill_slowdown = 1.36;
  j.plan.chosen.spill_traffic_bytes = std::size_t{45} << 30;
  const std::string text = plan_text({&j, 1});
  EXPECT_NE(text.find("spill: predicted 1.36x the time of the same chunks in DRAM (45.0 GiB read "
                      "and written per iteration)"),
            std::string::npos)
      << text;
  const auto job = nlohmann::json::parse(plan_json({&j, 1}))["jobs"][0];
  EXPECT_DOUBLE_EQ(job["spill_slowdown"].get<double>(), 1.36);
  EXPECT_EQ(job["spill_traffic_bytes"].get<std::size_t>(), std::size_t{45} << 30);
  // A plan held in DRAM says neither.
  const JobPlan in_dram = planned(std::size_t{1} << 30, std::size_t{2} << 30, 0);
  EXPECT_EQ(plan_text({&in_dram, 1}).find("predicted 1."), std::string::npos);
  EXPECT_FALSE(
      nlohmann::json::parse(plan_json({&in_dram, 1}))["jobs"][0].contains("spill_slowdown"));
}

}  // namespace
}  // namespace cpufold
