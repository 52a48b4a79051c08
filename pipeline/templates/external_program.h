// Runs the template tools (hmmbuild, hmmsearch, kalign) as child processes with clear errors.
// A minimal runner: pipeline/search/external_program.h (branch wt-g) is the general one this
// should be replaced by once both are merged.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cpufold {

// Runs `program` (looked up on PATH) with `args`; its stdout and stderr go to
// `log_dir`/PROGRAM.stdout and .stderr. InputError when the program is not installed (naming
// the Debian package `package`), when it cannot start, when it is killed by a signal (SIGKILL
// named as the likely out-of-memory kill) or exits non-zero (the last lines of its stderr
// quoted).
void run_program(const std::string& program, const std::vector<std::string>& args,
                 const std::filesystem::path& log_dir, const std::string& package);

}  // namespace cpufold
