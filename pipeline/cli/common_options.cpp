#include "pipeline/cli/common_options.h"

#include <omp.h>

#include <charconv>

#include "memory/error.h"
#include "memory/numa_tier.h"
#include "memory/spill_dir.h"
#include "ops/compute_precision.h"
#include "pipeline/cli/option_checks.h"

namespace cpufold {
namespace {

constexpr unsigned operator|(Command a, Command b) {
  return static_cast<unsigned>(a) | static_cast<unsigned>(b);
}
constexpr unsigned operator|(unsigned a, Command b) {
  return a | static_cast<unsigned>(b);
}

// The commands that run the model (what plan plans is what predict or evaluate would run).
constexpr unsigned kRunsModel =
    Command::predict | Command::evaluate | Command::plan | Command::profile | Command::bench_model;
constexpr unsigned kBenchBlocks = Command::bench_block | Command::bench_calibrate;
// predict finds its parameters in --data; plan takes them with --features.
constexpr unsigned kTakesParams = Command::evaluate | Command::profile | Command::bench_model |
                                  Command::bench_block | Command::bench_calibrate;

struct CommonOptionEntry {
  const char* name;
  unsigned commands;  // Command bits: the commands that take it
  unsigned required;  // Command bits: those where it must be given
  CLI::Option* (*add)(CLI::App& cmd, CommonOptions& into);
};

CLI::Validator numa_node() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        int node = -1;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), node);
        if (ec != std::errc() || end != text.data() + text.size())
          return "expected a NUMA node number, not '" + text + "'";
        try {
          NumaTier tier(node);  // names the nodes there are when this one is not usable
        } catch (const InputError& e) {
          return e.what();
        }
        return {};
      },
      "NODE");
}

const CommonOptionEntry kCommonOptions[] = {
    {"--params", kTakesParams | Command::plan, kTakesParams,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd.add_option("--params", into.params,
                             "AF2 parameters (params_model_N[_ptm].npz) or cpufold's .h5 copy "
                             "(cpufold convert-params)");
     }},
    {"--threads", kRunsModel | kBenchBlocks | Command::bench_features, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd.add_option("--threads", into.run.threads, "OpenMP threads (default: all cores)")
           ->transform(thread_count());
     }},
    {"--chunk-size", kRunsModel | Command::bench_block, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd
           .add_option_function<std::int64_t>(
               "--chunk-size",
               [&into](std::int64_t chunk) { into.run.chunks = ChunkSizes::all(chunk); },
               "rows per slice of every chunked loop: attention, outer product mean, triangle "
               "multiplication (0: no slicing), the same for every stack; bounds transient "
               "memory (default: the memory planner chooses one per family - template stack, "
               "extra-MSA stack, Evoformer, structure module - for the leanest plan within 3% "
               "of the fastest, or what fits --mem-budget)")
           ->transform(integer_in(kChunkSizeRange));
     }},
    {"--mem-budget", kRunsModel, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd
           .add_option_function<std::size_t>(
               "--mem-budget", [&into](std::size_t bytes) { into.run.mem_budget = bytes; },
               "memory the run may use at its peak, e.g. 1.5G or 800M (binary units); a run that "
               "cannot fit is refused before any model work (exit 4) with the smallest budget "
               "that fits (default: the memory available, MemAvailable or the cgroup limit)")
           ->transform(byte_size())
           ->type_name("SIZE");
     }},
    {"--spill-dir",
     Command::predict | Command::evaluate | Command::plan | Command::bench_model | kBenchBlocks, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd
           .add_option_function<std::filesystem::path>(
               "--spill-dir",
               [&into](const std::filesystem::path& dir) { into.run.spill_dir = dir; },
               "directory for the spill tier and per-iteration checkpoints (must exist and be "
               "writable): after each recycling iteration the state the next one starts from is "
               "saved there, and rerunning the same command after a kill resumes from it with "
               "identical results; a run's checkpoint is deleted when it completes")
           ->check(writable_directory_option());
     }},
    {"--spill-numa-node", Command::predict | Command::evaluate | Command::plan, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd
           .add_option_function<int>(
               "--spill-numa-node", [&into](int node) { into.run.spill_numa_node = node; },
               "NUMA node for the spill tier instead of files: far memory (another socket's DRAM, "
               "a CXL expander) that holds the activations the planner spills; --mem-budget then "
               "bounds the memory of the other nodes (a cgroup limit counts every node)")
           ->check(numa_node());
     }},
    {"--precision", kRunsModel | Command::bench_block, 0,
     [](CLI::App& cmd, CommonOptions& into) {
       return cmd
           .add_option("--precision", into.precision,
                       "compute precision of the trunk's products (Linears, attention, outer "
                       "product mean and triangle multiplication of the template, extra-MSA and "
                       "Evoformer stacks): fp32 (default), bf16 (bf16 operands and weights, fp32 "
                       "accumulation; needs oneDNN bf16 support: AVX512, native with "
                       "AVX512-BF16 or AMX) or auto (bf16 where native, else fp32); bf16 also "
                       "stores the extra-MSA representation in bf16 (half its memory); "
                       "LayerNorm, softmax, gates, the MSA and pair representations, embedders, "
                       "structure module and heads stay fp32")
           ->check(CLI::IsMember({"auto", "bf16", "fp32"}));
     }},
};

bool takes(unsigned commands, Command command) {
  return (commands & static_cast<unsigned>(command)) != 0;
}

}  // namespace

void add_common_options(CLI::App& cmd, CommonOptions& into, Command command) {
  for (const CommonOptionEntry& entry : kCommonOptions) {
    if (!takes(entry.commands, command)) continue;
    CLI::Option* option = entry.add(cmd, into);
    if (takes(entry.required, command)) option->required();
  }
}

void add_hidden_alias(CLI::App& cmd, const std::string& old_name, const std::string& name) {
  CLI::Option* target = cmd.get_option(name);
  cmd.add_option_function<std::string>(
         old_name,
         [target, name, old_name](const std::string& value) {
           // Parsed as if `name` had been given, with its checks and conversion; a refusal
           // names the spelling the user typed.
           target->clear();
           target->add_result(value);
           try {
             target->run_callback();
           } catch (const CLI::ValidationError& e) {
             std::string why = e.what();
             if (why.rfind(name + ": ", 0) == 0) why.erase(0, name.size() + 2);
             throw CLI::ValidationError(old_name, why);
           }
         },
         "old spelling of " + name)
      ->group("");
}

void resolve_common_options(CommonOptions& options,
                            const std::function<void(const std::string&)>& say) {
  if (options.run.threads > 0) omp_set_num_threads(options.run.threads);
  const DType chosen = resolve_precision(options.precision);
  if (say && (chosen == DType::bf16 || options.precision != "fp32"))
    say(describe_precision(options.precision, chosen));
  options.run.precision = chosen;
  if (say && options.run.spill_dir && spill_dir_in_memory(*options.run.spill_dir))
    say("warning: " + spill_dir_unused_reason(*options.run.spill_dir) +
        " (checkpoints are still written there)");
}

std::vector<std::string> common_option_args(const CLI::App& cmd) {
  std::vector<std::string> args;
  for (const CommonOptionEntry& entry : kCommonOptions) {
    const CLI::Option* option = cmd.get_option_no_throw(entry.name);
    if (option == nullptr || option->count() == 0) continue;
    for (const std::string& value : option->results()) args.insert(args.end(), {entry.name, value});
  }
  return args;
}

void add_random_run_options(CLI::App& cmd, RandomRunSizes& into) {
  cmd.add_option("--msa-rows", into.msa_rows, "MSA cluster rows (default 512)")
      ->transform(integer_in(1, kMaxRows));
  cmd.add_option("--extra-rows", into.extra_rows, "extra MSA rows (default 5120)")
      ->transform(integer_in(1, kMaxRows));
  cmd.add_option("--templates", into.templates,
                 "templates (default 4, or 0 for a model without templates, which takes none)")
      ->transform(integer_in(0, kMaxRows));
  cmd.add_option("--recycles", into.recycles, "recycles per run (default 0: one iteration)")
      ->transform(integer_in(0, kMaxRecycles));
}

}  // namespace cpufold
