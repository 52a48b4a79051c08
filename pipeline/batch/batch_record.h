// OUTPUT_DIR/batch.json of a multi-instance batch: the layout, the memory budget and, per job,
// where and when it ran, its plan, and predicted against measured peak and time.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "memory/chunk_sizes.h"

namespace cpufold {

// A job's search (predict --databases): a task of its own before the job's fold.
struct SearchTaskRecord {
  std::string status;  // empty: none; waiting, running, done, failed, interrupted
  std::string cores;   // the instance's it ran on
  double start_seconds = -1, end_seconds = -1;  // since the batch started
  std::size_t counted_bytes = 0;                // what admission counted (--search-memory)
  std::size_t measured_peak_bytes = 0;          // its worker's peak resident set, with the tools
  int jobs = 1;                                 // jobs searched by the task (mmseqs2: all)
  std::string exit;
};

struct InstanceJobRecord {
  std::string name;
  std::string status = "waiting";  // waiting, running, done, skipped, failed, interrupted
  std::size_t length = 0;
  int instance = -1;  // 1-based slot; -1: never started
  std::string cores;  // "4-7"
  int threads = 0;    // its worker's: its instance's, or every free instance's when nothing
                      // else could run beside it
  int numa_node = -1;
  int attempts = 0;
  double start_seconds = -1, end_seconds = -1;  // since the batch started
  std::string start_time, end_time;             // UTC, ISO 8601
  double predicted_seconds = 0;
  std::size_t predicted_peak_bytes = 0, measured_peak_bytes = 0;
  std::size_t budget_bytes = 0;  // the worker's --mem-budget
  ChunkSizes chunks;
  bool lean = false, spilled = false;
  std::string exit;  // the worker's: "exit 0", "killed by signal 9 (...)"
  std::string message;
  SearchTaskRecord search;
};

struct InstanceBatchRecord {
  int instances = 1, threads_per_instance = 1;
  std::string layout_reason;
  std::size_t budget_bytes = 0;
  std::string budget_source;
  std::vector<InstanceJobRecord> jobs;
};

// Writes `record` to `path` atomically.
void write_batch_record(const std::filesystem::path& path, const InstanceBatchRecord& record);

}  // namespace cpufold
