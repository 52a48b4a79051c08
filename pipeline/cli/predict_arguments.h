// predict's command line, shared by `cpufold predict` and `cpufold plan` (which plans what
// predict would run): every option, its checks and its conversion into PredictOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "pipeline/batch/predict.h"
#include "pipeline/cli/colabfold_options.h"
#include "pipeline/cli/common_options.h"

namespace cpufold {

struct PredictArguments {
  PredictOptions options;
  std::string model_order = "1,2,3,4,5";
  std::string model_type = "auto";
  std::string rank = "auto";
  std::string sort_queries_by = "length";
  std::string data;
  std::int64_t max_seq = 0, max_extra_seq = -1;
  std::string max_msa, skip_output;
  bool quiet = false;
  std::string instances = "auto";  // --instances K|auto
  std::string shard;               // --shard I/N
  double job_search_seconds = -1;  // hidden --job-search-seconds (a worker's); < 0: none
  ColabfoldValues colabfold;
  CommonOptions common;
};

// Registers predict's options on `cmd` for `command` (predict or plan). INPUT and OUTPUT_DIR are
// positional; plan may leave both out, and takes --params (with --features).
void add_predict_arguments(CLI::App& cmd, PredictArguments& args, Command command);

// Checks what was parsed and converts it into args.options; InputError for a refused
// ColabFold option or value, and applies the common options (threads).
void resolve_predict_arguments(PredictArguments& args);

}  // namespace cpufold
