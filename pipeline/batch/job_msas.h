// The MSAs of one `cpufold predict` job: its own A3M, else those --msa-dir holds for it, else
// the query alone when --msa-mode single_sequence asks for it; each choice said on the batch
// log.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "io/a3m.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/batch/predict_jobs.h"

namespace cpufold {

struct JobMsas {
  MsaSource source = MsaSource::none;  // where the files came from; single_sequence: none
  std::vector<std::filesystem::path> files;
  std::vector<Msa> msas;           // one per file, as read
  std::vector<std::string> names;  // the files' paths, for messages
};

// `say` gets one line per decision, prefixed by the caller. InputError (the job's own error)
// when the job has no MSA source, or --msa-dir holds none of its files and single-sequence
// mode was not asked for.
JobMsas load_job_msas(const PredictJob& job, const MsaSources& sources,
                      const std::function<void(const std::string&)>& say);

}  // namespace cpufold
