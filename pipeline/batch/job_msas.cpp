#include "pipeline/batch/job_msas.h"

#include "pipeline/batch/msa_directory.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> msa_files(const PredictJob& job, const fs::path& msa_dir,
                                const std::function<void(const std::string&)>& say) {
  if (!job.a3m.empty()) {
    say("MSA " + job.a3m.string());
    return {job.a3m};
  }
  if (msa_dir.empty()) {
    say("no MSA (no --msa-dir and not an A3M input): single-sequence mode, expect low confidence");
    return {};
  }
  const JobMsaFiles found = find_job_msas(msa_dir, job.name);
  for (const std::string& s : found.skipped) say("not used: " + s);
  if (found.files.empty()) {
    say("no MSA for this job in " + msa_dir.string() + " (looked for " + job.name + ".a3m, " +
        job.name + "/msas/, " + job.name + "/ and alignments/" + job.name +
        "/): single-sequence mode, expect low confidence");
  } else {
    std::string names;
    for (const fs::path& f : found.files)
      names += (names.empty() ? "" : ", ") + f.filename().string();
    say("MSAs from " + found.layout + ": " + names);
  }
  return found.files;
}

}  // namespace

JobMsas load_job_msas(const PredictJob& job, const fs::path& msa_dir,
                      const std::function<void(const std::string&)>& say) {
  JobMsas out;
  out.files = msa_files(job, msa_dir, say);
  for (const fs::path& f : out.files) {
    out.msas.push_back(read_msa_file(f));
    out.names.push_back(f.string());
    const std::int64_t limit = af2_hit_limit(f);
    if (limit > 0 && static_cast<std::int64_t>(out.msas.back().sequences.size()) == limit) {
      say(f.filename().string() + " read up to AF2's limit of " + std::to_string(limit) + " rows");
    }
  }
  return out;
}

}  // namespace cpufold
