#include "pipeline/batch/job_msas.h"

#include "memory/error.h"
#include "pipeline/batch/msa_directory.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSingleSequence =
    "single-sequence mode (--msa-mode single_sequence), expect low confidence";

// The files of `job` in --msa-dir; none only in single-sequence mode.
std::vector<fs::path> msa_dir_files(const PredictJob& job, const MsaSources& sources,
                                    const std::function<void(const std::string&)>& say) {
  const JobMsaFiles found = find_job_msas(sources.msa_dir, job.name);
  for (const std::string& s : found.skipped) say("not used: " + s);
  if (found.files.empty()) {
    const std::string missing = "no MSA for this job in " + sources.msa_dir.string() +
                                " (looked for " + job.name + ".a3m, " + job.name + ".sto, " +
                                job.name + "/msas/, " + job.name + "/ and alignments/" + job.name +
                                "/)";
    if (!sources.single_sequence) {
      throw InputError(missing +
                       ": add its MSA there, or fold it from the query alone with "
                       "--msa-mode single_sequence");
    }
    say(missing + ": " + kSingleSequence);
    return {};
  }
  std::string names;
  for (const fs::path& f : found.files)
    names += (names.empty() ? "" : ", ") + f.filename().string();
  say("MSAs from " + found.layout + ": " + names);
  return found.files;
}

}  // namespace

JobMsas load_job_msas(const PredictJob& job, const MsaSources& sources,
                      const std::function<void(const std::string&)>& say) {
  JobMsas out;
  out.source = job_msa_source(job, sources);
  switch (out.source) {
    case MsaSource::input_a3m:
      say("MSA " + job.a3m.string());
      out.files = {job.a3m};
      break;
    case MsaSource::msa_dir:
      out.files = msa_dir_files(job, sources, say);
      if (out.files.empty()) out.source = MsaSource::single_sequence;
      break;
    case MsaSource::searched: {
      const JobMsaFiles found = find_job_msas(sources.searched_dir, job.name);
      if (found.files.empty()) {
        throw InputError("no MSA for this job in " + sources.searched_dir.string() +
                         ", where the search of --databases writes it: rerun the batch to search "
                         "it again");
      }
      say("MSAs searched in --databases, kept in " + sources.searched_dir.string());
      out.files = found.files;
      break;
    }
    case MsaSource::single_sequence:
      say(std::string("no MSA given: ") + kSingleSequence);
      break;
    case MsaSource::none:
      throw InputError("no MSA for this job: " + msa_source_help());
  }
  for (const fs::path& f : out.files) {
    out.msas.push_back(read_msa_file(f));
    out.names.push_back(f.string());
    const std::int64_t rows = static_cast<std::int64_t>(out.msas.back().sequences.size());
    const std::int64_t limit = af2_hit_limit(f);
    say(f.filename().string() + ": " + std::to_string(rows) + " row(s) read" +
        (limit > 0 && rows == limit ? " (AF2's limit for this file)" : ""));
  }
  return out;
}

}  // namespace cpufold
