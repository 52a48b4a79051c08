// The finished model runs of a job that is not done yet, kept under OUTPUT_DIR/logs/ (one
// blob cache file per model and seed) until the job's files are written: a batch killed during
// model 3 of 5 resumes at model 3, and models 1 and 2 come back from these files.
//
// A record is keyed by everything the run's results depend on: the parameter file's content,
// the batch's output settings, the job's features (query and MSA), the model and the seed. A
// record of other settings, a truncated or corrupt one, is not used and is overwritten.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/batch/timings_file.h"
#include "pipeline/features/raw_features.h"
#include "pipeline/output/job_outputs.h"

namespace cpufold {

struct FinishedRun {
  RenderedPrediction prediction;
  RunTiming timing;
};

// Everything the feature pipeline takes from a job's raw features (query, MSA, templates), as
// one hash: computed once per job for the keys of its runs.
std::string features_hash(const RawFeatures& raw);
// The key of one model run of a job: `features` is features_hash() of its raw features.
std::string finished_run_key(std::string_view output_settings, const std::string& params_hash,
                             const std::string& features, int model_number, std::uint64_t seed);

// logs/JOB.TAG.finished
std::filesystem::path finished_run_path(const std::filesystem::path& output_dir,
                                        const std::string& job, const std::string& tag);

// Writes the record atomically; a failure only costs a rerun of the model after a kill.
void save_finished_run(const std::filesystem::path& path, const std::string& key,
                       const FinishedRun& run);
// The record when it exists, is whole and has this key.
std::optional<FinishedRun> load_finished_run(const std::filesystem::path& path,
                                             const std::string& key);

// Removes the job's records (once its files are written, or when it starts afresh).
void remove_finished_runs(const std::filesystem::path& output_dir, const std::string& job);

}  // namespace cpufold
