#include "pipeline/cli/common_options.h"

#include <omp.h>

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
              "multiplication (0: no slicing); bounds transient memory (default: the "
              "memory planner chooses the leanest plan within 3% of the fastest, or "
              "what fits --mem-budget)")
           ->transform(integer_in(0, kMaxRows));
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

void apply_common_options(const CommonOptions& options) {
  if (options.threads > 0) omp_set_num_threads(options.threads);
}

}  // namespace cpufold
