// OUTPUT_DIR/timings.json: per job, its length, MSA depth and the seconds of every stage of
// every model run. Jobs of earlier runs into the same directory are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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
  // --templates: the templates fed to models 1 and 2, their hit file, the search's seconds.
  std::optional<std::int64_t> templates;
  std::string template_source;
  double template_seconds = 0;
  std::optional<double> search_seconds;  // --databases: this batch's MSA search of the job
  std::vector<RunTiming> runs;
  double total_seconds = 0;
};

// One run's record as JSON text, and back (InputError-free: the text is cpufold's own; a
// malformed one throws nlohmann's exception).
std::string run_timing_json(const RunTiming& run);
RunTiming run_timing_from_json(std::string_view text);

// The file holds one line per job, so that it is read and rewritten as a stream: a batch of
// 10,000 jobs keeps in memory only the records it has not written yet, not the whole file.
class TimingsFile {
 public:
  // The file at `path`; nothing is read until write(). An unreadable or malformed file counts
  // as empty; one written by an earlier cpufold (indented JSON) is read whole once.
  explicit TimingsFile(std::filesystem::path path);
  ~TimingsFile();

  void job_done(const std::string& job, const JobTiming& timing);
  void job_failed(const std::string& job, const std::string& error);
  // Copies `job`'s record from another timings file (a worker's, or the job's own under
  // logs/) into this one and returns its status ("done" or "failed") and error; empty when
  // that file has no record of it.
  struct Record {
    std::string status, error;
  };
  std::optional<Record> merge_job_from(const std::filesystem::path& other, const std::string& job);
  // The jobs the file records now (read as a stream).
  std::set<std::string> recorded_jobs() const;
  // For a run killed before it wrote the file: each job of `done` that the file does not
  // record takes its record from `own_record(job)`, the copy a job leaves before it is marked
  // done. Returns how many came back.
  std::size_t recover(const std::vector<std::string>& done,
                      const std::function<std::filesystem::path(const std::string&)>& own_record);
  // Writes the file atomically: the records of this object since its last write() replace
  // theirs in the file as it is now (read under a lock on its directory), so runs sharing an
  // output directory (shards of a Slurm array) keep each other's records. The written records
  // are then dropped from memory. InputError when the file cannot be written (they are kept).
  void write();

 private:
  std::filesystem::path path_;
  std::vector<std::pair<std::string, std::string>> pending_;  // job, its record as one JSON line
  void add(const std::string& job, std::string record);
};

}  // namespace cpufold
