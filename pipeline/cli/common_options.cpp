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
       cmd.add_option("--chunk-size", into.chunk_size,
                      "rows per attention / outer-product slice; bounds transient memory for "
                      "long queries (default 0: no slicing)")
           ->transform(integer_in(0, kMaxRows));
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
