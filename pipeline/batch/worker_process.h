// One worker process of a multi-instance batch: this executable started again on its own cores
// (and NUMA node), its output appended to a file, killed with its parent.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/batch/node_cores.h"

namespace cpufold {

struct WorkerSpec {
  std::vector<std::string> args;  // argv after the program name
  CoreSlot slot;                  // pinned there before it starts
  std::filesystem::path output;   // stdout and stderr, appended
};

// Starts /proc/self/exe with `spec.args`. The child gets SIGTERM when this process dies, so no
// worker outlives a killed batch. InternalError when it cannot be started.
pid_t start_worker(const WorkerSpec& spec);

struct WorkerExit {
  pid_t pid = 0;
  int status = 0;                 // waitpid's
  std::size_t max_rss_bytes = 0;  // the worker's peak resident set (getrusage)
};

// A worker that ended, without waiting; empty when none has.
std::optional<WorkerExit> reap_worker();

// The exit code a worker's status stands for (128 + signal for a signal), and one line on why:
// "exit 4", "killed by signal 9 (Killed): out of memory (an OOM killer) or killed by hand".
int exit_code_of(int status);
std::string describe_exit(int status);
bool killed_by_signal(int status);

// The argv of this process (from /proc/self/cmdline), program name first.
std::vector<std::string> own_command_line();

// `args` without the options named in `drop` (both "--opt VALUE" and "--opt=VALUE"); flags (no
// value) are named in `drop_flags`.
std::vector<std::string> without_options(const std::vector<std::string>& args,
                                         const std::vector<std::string>& drop,
                                         const std::vector<std::string>& drop_flags);

}  // namespace cpufold
