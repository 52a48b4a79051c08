// OUTPUT_DIR/timings.json: per job, its length, MSA depth and the seconds of every stage of
// every model run. Jobs of earlier runs into the same directory are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pipeline/runner/model_runner.h"

namespace cpufold {

struct RunTiming {
  std::string model;  // "model_3"
  std::uint64_t seed = 0;
  double load_seconds = 0;     // 0 when the model was loaded already
  double feature_seconds = 0;  // the feature pipeline of this run
  std::vector<StageTime> model_seconds;
  std::int64_t iterations = 0, n_seq = 0, n_extra = 0;
  double mean_plddt = 0;
  std::optional<double> ptm;
  std::size_t planned_bytes = 0, peak_rss_bytes = 0;
  std::size_t predicted_peak_bytes = 0;  // the memory plan's
  ChunkSizes chunks;                     // the plan's chunk sizes (0: unsliced)
};

struct JobTiming {
  std::size_t length = 0;
  std::int64_t msa_rows = 0;
  double feature_seconds = 0;  // reading the MSAs into raw features
  std::vector<RunTiming> runs;
  double total_seconds = 0;
};

class TimingsFile {
 public:
  // Reads what an earlier run left in `path`; an unreadable or malformed file starts empty.
  explicit TimingsFile(std::filesystem::path path);
  ~TimingsFile();

  void job_done(const std::string& job, const JobTiming& timing);
  void job_failed(const std::string& job, const std::string& error);
  // Copies `job`'s record from another timings file (a worker's) into this one and returns its
  // status ("done" or "failed") and error; empty when that file has no record of it.
  struct Record {
    std::string status, error;
  };
  std::optional<Record> merge_job_from(const std::filesystem::path& other, const std::string& job);
  // Writes the file atomically. Records of jobs this object did not touch are taken from the
  // file as it is now (under a lock on its directory), so runs sharing an output directory (shards
  // of a Slurm array) keep each other's records.
  void write() const;

 private:
  struct Json;
  std::filesystem::path path_;
  std::unique_ptr<Json> json_;
  std::set<std::string> touched_;  // jobs recorded by this object
};

}  // namespace cpufold
