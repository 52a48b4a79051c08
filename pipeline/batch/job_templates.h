// The templates of one `cpufold predict --templates` job (AF2's template pipeline, see
// pipeline/templates/): hits from --msa-dir's pdb_hits.sto / .hhr, else from an earlier run's
// OUTPUT_DIR/JOB_env/pdb_hits.sto, else from an hmmsearch run now (kept there for reruns);
// --custom-template-path searches its own mmCIF files instead.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/batch/predict.h"
#include "pipeline/batch/predict_jobs.h"
#include "pipeline/features/template_features.h"

namespace cpufold {

struct JobTemplates {
  RawTemplates raw;                // n_templ = 0: none found (the job folds without)
  std::string source;              // the hit file read or written
  std::vector<std::string> names;  // "1abc_A" per template kept
  double seconds = 0;              // search and featurization
};

// InputError before any work when --templates has no source (no --template-db, no
// --custom-template-path, no --msa-dir), or a --template-db lacks pdb_mmcif/mmcif_files/.
void check_template_options(const PredictOptions& o);

// The job's templates; `say` gets one line per decision (hits skipped and why, templates kept).
JobTemplates load_job_templates(const PredictJob& job, const PredictOptions& o,
                                const std::function<void(const std::string&)>& say);

// The template search of load_job_templates alone: an hmmsearch when the job has no hits yet,
// its result kept in OUTPUT_DIR/JOB_env/pdb_hits.sto for the fold (a --instances search task).
void search_job_template_hits(const PredictJob& job, const PredictOptions& o,
                              const std::function<void(const std::string&)>& say);

// OUTPUT_DIR/JOB_env: where a job's template search result is kept.
std::filesystem::path job_search_dir(const std::filesystem::path& output_dir,
                                     const std::string& job);

}  // namespace cpufold
