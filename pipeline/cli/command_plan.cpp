// `cpufold plan`: the memory plan of what predict (INPUT ...) or evaluate (--features
// --params) would run, printed without running the model.

#include <cstdio>
#include <iostream>
#include <memory>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/system_memory.h"
#include "pipeline/batch/node_cores.h"
#include "pipeline/batch/node_sizing.h"
#include "pipeline/batch/plan_report.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/predict_arguments.h"
#include "pipeline/runner/evaluate.h"
#include "pipeline/runner/time_model.h"

namespace cpufold {
namespace {

constexpr const char* kPlanManual = R"(
WHAT IT PRINTS
  For every job: the sizes it runs at (N_res, MSA rows, extra rows, templates;
  for predict, the model of --model-order whose run needs the most), each block
  resident at the run's peak (the process with its weights, measured after
  loading them; the runtime's working memory; the features, outputs and scratch
  arenas), the predicted peak, the chunk size the planner chose and why, and
  the smallest --mem-budget that fits. predict and evaluate make the same plan
  for the same options.
  --format json: {"dram_peak_bytes", "spill_bytes", "fits", "min_budget_bytes",
  "jobs": [{"name", "n_res", ..., "chunk_size", "dram_peak_bytes", "fits",
  "above_available_memory", "min_budget_bytes", "blocks": [...]}]} (the
  top-level figures are the largest job's). A plan that fits a --mem-budget
  above the memory available now says so: such a run may be killed.
  --format slurm: #SBATCH lines for a job (or with --shards N an array) that
  runs predict: --mem for the largest job (the predicted peak plus a 15%
  margin), --cpus-per-task (--node-cores, --threads or this machine's cores)
  and --time (the longest share's predicted makespan x1.5 + 5 min).
  --node-cores C / --node-memory M: how a node of that size would run the
  batch with predict --instances auto: instances x threads, predicted makespan,
  proteins/hour, peak memory, and the same on a quarter and half the cores.
  With --mem-budget, a job that cannot fit it makes the status 4 (the plan is
  still printed).

EXAMPLES
  cpufold plan proteins.fasta --msa-dir msas --data ~/af2 --mem-budget 4G
  cpufold plan --features features.h5 --params params_model_1_ptm.h5 --format json
  cpufold plan proteins.fasta --data ~/af2 --format slurm >> job.sbatch
  cpufold plan proteins.fasta --data ~/af2 --node-cores 112 --node-memory 1T
)";

struct PlanArgs {
  PredictArguments predict;
  std::string features, format = "text";
  int node_cores = 0, shards = 1;
  std::string node_memory;
};

// The cores a node (or a Slurm task) has: --node-cores, else --threads, else this machine's.
int task_cores(const PlanArgs& a) {
  if (a.node_cores > 0) return a.node_cores;
  if (a.predict.options.threads > 0) return a.predict.options.threads;
  return static_cast<int>(node_cores().cpus.size());
}

std::vector<JobPlan> plan_features(PlanArgs& a) {
  EvaluateOptions o;
  static_cast<SharedRunOptions&>(o) = a.predict.options;
  o.params = a.predict.common.params;
  o.features = a.features;
  const EvaluatePlan e = plan_evaluate(o);
  JobPlan j;
  j.name = std::filesystem::path(a.features).filename().string();
  j.model = o.params.stem().string();
  j.n_res = e.dims.n_res;
  j.n_seq = e.dims.n_seq;
  j.n_extra = e.dims.n_extra;
  j.n_templ = e.dims.n_templ;
  j.plan = e.plan;
  return {j};
}

// INPUT or --features, never both; --params only with --features.
void check_plan_arguments(const PlanArgs& a) {
  const bool by_features = !a.features.empty();
  if (by_features == !a.predict.options.input.empty()) {
    throw InputError(
        "plan needs INPUT (as predict) or --features with --params (as evaluate), one of the two");
  }
  const bool has_params = !a.predict.common.params.empty();
  if (by_features && !has_params) throw InputError("--features needs --params");
  if (!by_features && has_params) {
    throw InputError("--params goes with --features; for INPUT give --data (as predict)");
  }
}

void print_plans(const PlanArgs& a, const std::vector<JobPlan>& plans) {
  if (a.format == "json") {
    std::cout << plan_json(plans);
  } else if (a.format == "slurm") {
    std::cout << plan_slurm(plans, {task_cores(a), a.shards, a.predict.options.precision});
  } else {
    std::cout << plan_text(plans);
    if (a.node_cores > 0 || !a.node_memory.empty()) {
      const std::size_t memory =
          a.predict.options.mem_budget ? *a.predict.options.mem_budget : usable_memory_bytes();
      std::cout << node_sizing_text(plans, task_cores(a), memory, a.predict.options.precision,
                                    machine_time_model().instances);
    }
  }
  std::cout.flush();
}

// Status 4 when a job does not fit the budget, 2 when one could not be planned.
void require_all_planned(const std::vector<JobPlan>& plans) {
  std::size_t unplanned = 0, over = 0;
  for (const JobPlan& j : plans) {
    if (!j.error.empty())
      ++unplanned;
    else if (!j.plan.fits && j.plan.budget)
      ++over;
  }
  if (over > 0) {
    throw BudgetError(std::to_string(over) + " of " + std::to_string(plans.size()) +
                      " job(s) do not fit the budget (--mem-budget or --node-memory; see the "
                      "plan above)");
  }
  if (unplanned > 0) {
    throw InputError(std::to_string(unplanned) + " of " + std::to_string(plans.size()) +
                     " job(s) could not be planned (see above)");
  }
}

void run_plan(PlanArgs& a) {
  resolve_predict_arguments(a.predict);
  check_plan_arguments(a);
  const bool by_features = !a.features.empty();
  if (!a.node_memory.empty()) {
    a.predict.options.mem_budget = parse_byte_size(a.node_memory, "--node-memory");
  }
  if (!a.predict.quiet && !by_features) {
    a.predict.options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  }
  const std::vector<JobPlan> plans = by_features ? plan_features(a) : plan_jobs(a.predict.options);
  print_plans(a, plans);
  require_all_planned(plans);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Print the memory plan of a run without running the model: predicted peak memory, chunk "
      "size, whether it fits --mem-budget and the smallest budget that would. Takes predict's "
      "arguments (INPUT with --msa-dir, --data and model options; OUTPUT_DIR not needed) or "
      "evaluate's (--features F.h5 --params P).");
  cmd->footer(std::string(kPlanManual) + kExitStatusHelp);
  add_predict_arguments(*cmd, args->predict, Command::plan);
  cmd->add_option("--features", args->features,
                  "plan `cpufold evaluate` on these processed features (.h5) instead of INPUT");
  cmd->add_option("--format", args->format, "text (default), json or slurm")
      ->check(CLI::IsMember({"text", "json", "slurm"}));
  cmd->add_option("--node-cores", args->node_cores,
                  "size a node (or a Slurm task) with this many cores: instances, threads each, "
                  "predicted makespan and proteins/hour (text), --cpus-per-task (slurm)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--node-memory", args->node_memory,
                  "the node's memory for --node-cores, e.g. 1T or 512G (default: --mem-budget, "
                  "else this machine's); jobs are planned to fit it");
  cmd->add_option("--shards", args->shards,
                  "with --format slurm: a job array of this many tasks, each folding its share "
                  "(--time is the longest share's)")
      ->check(CLI::Range(1, 100000));
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace cpufold
