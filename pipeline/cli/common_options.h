// The options shared by the commands, declared in one table (common_options.cpp): each entry
// names the commands that take it and binds to one field, so an option shared by predict,
// evaluate, plan and profile is one entry there (and, when the runner reads it, one field of
// SharedRunOptions). The same name, help text, range check and effect in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/runner/shared_run_options.h"

namespace cpufold {

// The commands that take shared options (bits of CommonOptionEntry::commands).
enum class Command : unsigned {
  predict = 1u << 0,
  evaluate = 1u << 1,
  plan = 1u << 2,
  profile = 1u << 3,
  bench_model = 1u << 4,
  bench_block = 1u << 5,
  bench_calibrate = 1u << 6,
  bench_features = 1u << 7,
};

struct CommonOptions {
  SharedRunOptions run;  // what the runner reads; its precision set by resolve_common_options
  // --precision auto|bf16|fp32 as given; resolve_common_options resolves it for this CPU.
  std::string precision = "fp32";
  std::filesystem::path params;  // --params: an AF2 .npz or a cpufold .h5
};

// The sizes of a run on random inputs (`profile`, `bench model`).
struct RandomRunSizes {
  std::int64_t msa_rows = 512, extra_rows = 5120, recycles = 0;
  std::optional<std::int64_t> templates;  // empty: 4, or 0 for a model without templates
};

// Registers --msa-rows, --extra-rows, --templates and --recycles on `cmd`, bound to `into`.
void add_random_run_options(CLI::App& cmd, RandomRunSizes& into);

// Registers every shared option `command` takes on `cmd`, bound to `into`, with the checks of
// option_checks.h.
void add_common_options(CLI::App& cmd, CommonOptions& into, Command command);

// `old_name` as a hidden spelling of `name` (already on `cmd`) that sets the same value: names
// a release renamed keep working for one more release.
void add_hidden_alias(CLI::App& cmd, const std::string& old_name, const std::string& name);

// What takes effect before a command runs: the OpenMP thread count for the process, and
// --precision resolved for this CPU into run.precision (InputError for bf16 where oneDNN has no
// bf16 matmul); `say` gets one line naming the precision and why, when it is not plain fp32.
void resolve_common_options(CommonOptions& options,
                            const std::function<void(const std::string&)>& say = {});

// The shared options given on `cmd`'s command line, as arguments that give them again (a
// parent passing its options to the child processes it starts).
std::vector<std::string> common_option_args(const CLI::App& cmd);

}  // namespace cpufold
