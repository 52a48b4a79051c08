// `cpufold plan` for predict's inputs: each job's memory plan for the models predict would run,
// from its real MSA and feature sizes, without running the model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "memory/memory_plan.h"
#include "pipeline/batch/predict.h"

namespace cpufold {

struct JobPlan {
  std::string name;
  std::string model;  // the model whose run needs the most memory ("model_1")
  std::int64_t n_res = 0, n_seq = 0, n_extra = 0, n_templ = 0;
  MemoryPlan plan;
  double flops = 0;          // every run of the job (models x seeds), all iterations
  bool deepest_msa = false;  // planned at the deepest MSA the models read: not searched yet
  std::string error;         // the job cannot be planned (bad input); plan is then empty
};

// The plan's shared weights (the mapped weight cache): what concurrent instances hold once.
std::size_t shared_weight_bytes(const MemoryPlan& plan);

class ModelCache;
struct RunOptions;

// One job's plan for the models in `params` run with `run` (whose mem_budget the planner
// fits): the plan of the model whose run needs the most memory. A bad input sets `error`.
// `msa_pending`: the job's MSA is still to be searched; it is planned with deepest_msa.h's.
JobPlan plan_job(const PredictJob& job, const PredictOptions& options, ModelCache& models,
                 const std::map<int, std::filesystem::path>& params, const RunOptions& run,
                 bool msa_pending = false);

// One plan per job of options.input, in predict's order; options.progress sees one line per
// job. Throws what predict throws for the batch as a whole (options, parameter files).
std::vector<JobPlan> plan_jobs(const PredictOptions& options);

}  // namespace cpufold
