// Runs an external program (jackhmmer, hhblits, mmseqs, kalign, ...) to completion and turns
// every way it can fail into an Error a user can act on: not installed, a non-zero exit (with
// the tail of its stderr), a crash, and a kill that most likely means it ran out of memory.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "memory/error.h"

namespace cpufold {

// An external program exited non-zero or crashed: the program or its data is at fault, not
// cpufold and not the memory budget.
class ExternalProgramError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 6; }
};

struct ExternalProgram {
  std::vector<std::string> argv;      // argv[0]: a name looked up on PATH, or a path
  std::string package;                // the Debian package that provides argv[0], for the message
  std::filesystem::path working_dir;  // empty: this process's
  // Where its stdout / stderr go (truncated first). Empty: captured into ProgramOutput.
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  // NAME=VALUE pairs set on top of this process's environment.
  std::vector<std::pair<std::string, std::string>> environment;
};

struct ProgramOutput {
  std::string out;  // its stdout, when captured
  std::string err;  // its stderr, when captured (also when written to stderr_file: the tail)
  double seconds = 0;
};

// The absolute path of `name` on PATH (or `name` itself when it holds a '/' and is
// executable); empty when there is none.
std::filesystem::path find_on_path(const std::string& name);

// InputError unless `name` is on PATH: "NAME: program not found on PATH; install the Debian
// package 'PACKAGE' ...". run_program checks the same; call it first to refuse a run before any
// work.
void require_program(const std::string& name, const std::string& package);

// Runs `program`, stdin from /dev/null, and waits for it. The child gets SIGTERM if this
// process dies. Throws
//   InputError            argv[0] is not on PATH (the message names `package` to install),
//                         or a stdout/stderr file cannot be opened;
//   BudgetError           it was killed by SIGKILL: most likely the kernel's or the cgroup's
//                         OOM killer (said for certain when the cgroup counted an OOM kill);
//   ExternalProgramError  it exited non-zero or another signal killed it; the message gives
//                         the command, the status and the last lines of its stderr.
ProgramOutput run_program(const ExternalProgram& program);

// The last `max_lines` lines of `text` (at most `max_bytes`), each indented for a message.
std::string text_tail(const std::string& text, std::size_t max_lines = 12,
                      std::size_t max_bytes = 2000);

}  // namespace cpufold
