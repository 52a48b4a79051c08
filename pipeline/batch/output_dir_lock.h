// The lock a `cpufold predict` batch holds on its output directory while it runs, so that two
// batches with different settings cannot leave a mixed set of files there. Batches with the
// same settings (the shards of one Slurm array, or a rerun beside a running one) share it, as
// they were designed to. With --instances the scheduler holds it for its workers.
#pragma once

#include <filesystem>
#include <string>

#include "memory/unique_fd.h"

namespace cpufold {

// The lock file, OUTPUT_DIR/logs/batch.lock: its content names the settings and process of the
// run that took it first.
inline constexpr const char* kOutputLockName = "batch.lock";

class OutputDirLock {
 public:
  // Takes a shared lock for a run with `settings` (a JSON object: what decides the outputs).
  // InputError, naming the settings that differ and the other run's process, when a run with
  // other settings holds it now.
  OutputDirLock(const std::filesystem::path& dir, const std::string& settings);
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;

 private:
  UniqueFd fd_;  // closing it releases the lock
};

}  // namespace cpufold
