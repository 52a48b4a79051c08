#include "pipeline/cli/common_options.h"

#include <omp.h>

#include <charconv>

#include "memory/error.h"
#include "memory/numa_tier.h"
#include "ops/compute_precision.h"
#include "pipeline/cli/option_checks.h"

namespace cpufold {
namespace {

struct CommonOptionEntry {
  CommonOption id;
  void (*add)(CLI::App& cmd, CommonOptions& into);
};

constexpr CommonOptionEntry kCommonOptions[] = {
    {CommonOption::threads,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option("--threads", into.threads, "OpenMP threads (default: all cores)")
           ->transform(thread_count());
     }},
    {CommonOption::chunk_size,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option(
              "--chunk-size", into.chunk_size,
              "rows per slice of every chunked loop: attention, outer product mean, triangle "
              "multiplication (0: no slicing), the same for every stack; bounds transient "
              "memory (default: the memory planner chooses one per family - template stack, "
              "extra-MSA stack, Evoformer, structure module - for the leanest plan within 3% "
              "of the fastest, or what fits --mem-budget)")
           ->transform(integer_in(kChunkSizeRange));
     }},
    {CommonOption::mem_budget,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option_function<std::size_t>(
              "--mem-budget", [&into](std::size_t bytes) { into.memory_budget_bytes = bytes; },
              "memory the run may use at its peak, e.g. 1.5G or 800M (binary units); a run that "
              "cannot fit is refused before any model work (exit 4) with the smallest budget "
              "that fits (default: the memory available, MemAvailable or the cgroup limit)")
           ->transform(byte_size())
           ->type_name("SIZE");
     }},
    {CommonOption::spill_dir,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option(
              "--spill-dir", into.spill_dir,
              "directory for the spill tier and per-iteration checkpoints (must exist and be "
              "writable): after each recycling iteration the state the next one starts from is "
              "saved there, and rerunning the same command after a kill resumes from it with "
              "identical results; a run's checkpoint is deleted when it completes")
           ->check(writable_directory_option());
     }},
    {CommonOption::spill_numa_node,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option_function<int>(
              "--spill-numa-node", [&into](int node) { into.spill_numa_node = node; },
              "NUMA node for the spill tier instead of files: far memory (another socket's DRAM, "
              "a CXL expander) that holds the activations the planner spills; --mem-budget then "
              "bounds the memory of the other nodes (a cgroup limit counts every node)")
           ->check([](const std::string& text) -> std::string {
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
           })
           ->type_name("NODE");
     }},
    {CommonOption::precision,
     [](CLI::App& cmd, CommonOptions& into) {
       cmd.add_option("--precision", into.precision,
                      "compute precision of the trunk's products (Linears, attention, outer "
                      "product mean and triangle multiplication of the template, extra-MSA and "
                      "Evoformer stacks): fp32 (default), bf16 (bf16 operands and weights, fp32 "
                      "accumulation; needs oneDNN bf16 support: AVX512, native with "
                      "AVX512-BF16 or AMX) or auto (bf16 where native, else fp32); bf16 also "
                      "stores the extra-MSA representation in bf16 (half its memory); LayerNorm, "
                      "softmax, gates, the MSA and pair representations, embedders, structure "
                      "module and heads stay fp32")
           ->check(CLI::IsMember({"auto", "bf16", "fp32"}));
     }},
};

}  // namespace

void add_common_options(CLI::App& cmd, CommonOptions& into,
                        std::initializer_list<CommonOption> which) {
  for (const CommonOptionEntry& entry : kCommonOptions) {
    for (CommonOption id : which) {
      if (id == entry.id) entry.add(cmd, into);
    }
  }
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

void apply_common_options(const CommonOptions& options) {
  if (options.threads > 0) omp_set_num_threads(options.threads);
}

DType common_precision(const CommonOptions& options,
                       const std::function<void(const std::string&)>& say) {
  const DType chosen = resolve_precision(options.precision);
  if (say && (chosen == DType::bf16 || options.precision != "fp32"))
    say(describe_precision(options.precision, chosen));
  return chosen;
}

}  // namespace cpufold
