#include "pipeline/batch/msa_source.h"

#include "io/text_safety.h"
#include "memory/error.h"
#include "pipeline/batch/msa_directory.h"
#include "pipeline/batch/predict.h"

namespace cpufold {

namespace fs = std::filesystem;

MsaSources msa_sources(const PredictOptions& o) {
  return {o.msa_dir, o.databases.empty() ? fs::path() : searched_msa_dir(o.output_dir),
          o.single_sequence};
}

fs::path searched_msa_dir(const fs::path& output_dir) {
  return output_dir / "msas";
}

MsaSource job_msa_source(const PredictJob& job, const MsaSources& sources) {
  if (!job.a3m.empty()) return MsaSource::input_a3m;
  if (!sources.msa_dir.empty() &&
      (sources.searched_dir.empty() || !find_job_msas(sources.msa_dir, job.name).files.empty())) {
    return MsaSource::msa_dir;
  }
  if (!sources.searched_dir.empty()) return MsaSource::searched;
  if (sources.single_sequence) return MsaSource::single_sequence;
  return MsaSource::none;
}

std::string_view msa_source_name(MsaSource source) {
  switch (source) {
    case MsaSource::input_a3m:
      return "input_a3m";
    case MsaSource::msa_dir:
      return "msa_dir";
    case MsaSource::searched:
      return "databases";
    case MsaSource::single_sequence:
      return "single_sequence";
    case MsaSource::none:
      return "none";
  }
  return "none";
}

std::string msa_source_help() {
  return "give precomputed MSAs with --msa-dir DIR (or A3M input), search local sequence "
         "databases with --databases DIR, or fold from the query alone with --msa-mode "
         "single_sequence (much lower confidence)";
}

void require_msa_sources(const std::vector<PredictJob>& jobs, const MsaSources& sources) {
  constexpr std::size_t kNamed = 3;
  std::size_t missing = 0;
  std::string names;
  for (const PredictJob& job : jobs) {
    if (!job.error.empty() || job_msa_source(job, sources) != MsaSource::none) continue;
    if (++missing <= kNamed) names += (names.empty() ? "" : ", ") + text::excerpt(job.name);
  }
  if (missing == 0) return;
  if (missing > kNamed) names += ", ...";
  throw InputError(std::to_string(missing) + " of " + std::to_string(jobs.size()) +
                   " job(s) have no MSA (" + names +
                   "): cpufold queries no MSA server and folds from the query alone only when "
                   "asked; " +
                   msa_source_help());
}

}  // namespace cpufold
