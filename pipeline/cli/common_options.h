// The options shared by every command that runs the model, declared in one table: the same
// name, help text, range check and effect in each command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

#include "memory/dtype.h"

namespace cpufold {

struct CommonOptions {
  int threads = 0;  // --threads: OpenMP threads; 0: all cores
  // --chunk-size: rows per attention / outer-product slice; empty: the memory planner chooses.
  std::optional<std::int64_t> chunk_size;
  std::optional<std::size_t> memory_budget_bytes;  // --mem-budget; empty: the machine's memory
  // --precision auto|bf16|fp32: the trunk stacks' compute precision, as given; the commands
  // resolve it with resolve_precision() (ops/compute_precision.h).
  std::string precision = "fp32";
  std::filesystem::path spill_dir;     // --spill-dir (spill tier, checkpoints); empty: neither
  std::optional<int> spill_numa_node;  // --spill-numa-node: the spill tier on a far NUMA node
};

enum class CommonOption { threads, chunk_size, mem_budget, spill_dir, spill_numa_node, precision };

// The sizes of a run on random inputs (`profile`, `bench model`).
struct RandomRunSizes {
  std::int64_t msa_rows = 512, extra_rows = 5120, recycles = 0;
  std::optional<std::int64_t> templates;  // empty: 4, or 0 for a model without templates
};

// Registers --msa-rows, --extra-rows, --templates and --recycles on `cmd`, bound to `into`.
void add_random_run_options(CLI::App& cmd, RandomRunSizes& into);

// Registers the listed options on `cmd`, bound to `into`, with the checks of option_checks.h.
void add_common_options(CLI::App& cmd, CommonOptions& into,
                        std::initializer_list<CommonOption> which);

// What takes effect for the whole process before a command runs (the OpenMP thread count).
void apply_common_options(const CommonOptions& options);

// --precision resolved for this CPU: f32 or bf16 (InputError for bf16 where oneDNN has no
// bf16 matmul); `say` gets one line naming the choice and why, when it is not plain fp32.
DType common_precision(const CommonOptions& options,
                       const std::function<void(const std::string&)>& say = {});

}  // namespace cpufold
