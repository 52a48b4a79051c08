// Where each `cpufold predict` / `cpufold plan` job's MSA comes from, decided from the options
// and the job before any model work. The one place a new MSA source is added.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/batch/predict_jobs.h"

namespace cpufold {

struct PredictOptions;

enum class MsaSource {
  input_a3m,        // the job's own A3M input
  msa_dir,          // the job's files in --msa-dir
  searched,         // searched in --databases, kept in OUTPUT_DIR/msas/
  single_sequence,  // the query alone, because --msa-mode single_sequence asks for it
  none,             // no source and single-sequence mode not asked for: the job is refused
};

// The MSA sources the options give every job.
struct MsaSources {
  std::filesystem::path msa_dir;       // --msa-dir; empty: none
  std::filesystem::path searched_dir;  // OUTPUT_DIR/msas/ with --databases; empty: no search
  bool single_sequence = false;        // --msa-mode single_sequence
};
MsaSources msa_sources(const PredictOptions& o);

// Where predict --databases keeps the MSAs it searched: OUTPUT_DIR/msas/.
std::filesystem::path searched_msa_dir(const std::filesystem::path& output_dir);

// The job's own A3M first, then --msa-dir (whether it holds the job's files is checked when
// they are read; with --databases too, a job it lacks is searched instead), then a search of
// --databases, then single-sequence mode when asked for, else none.
MsaSource job_msa_source(const PredictJob& job, const MsaSources& sources);

// "input_a3m", "msa_dir", "databases", "single_sequence", "none": as scores JSON and config.json
// say it.
std::string_view msa_source_name(MsaSource source);

// What a user can do about a job without an MSA: the ways out, one sentence.
std::string msa_source_help();

// InputError naming how many jobs (and the first few) have no MSA source and the ways out,
// when any job without an input error has none; jobs with input errors fail on their own.
void require_msa_sources(const std::vector<PredictJob>& jobs, const MsaSources& sources);

}  // namespace cpufold
