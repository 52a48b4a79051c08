// The MSAs of one `cpufold predict` job: its own A3M, else those --msa-dir holds for it, else
// none (single-sequence mode); each choice said on the batch log.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "io/a3m.h"
#include "pipeline/batch/predict_jobs.h"

namespace cpufold {

struct JobMsas {
  std::vector<std::filesystem::path> files;
  std::vector<Msa> msas;           // one per file, as read
  std::vector<std::string> names;  // the files' paths, for messages
};

// `say` gets one line per decision, prefixed by the caller.
JobMsas load_job_msas(const PredictJob& job, const std::filesystem::path& msa_dir,
                      const std::function<void(const std::string&)>& say);

}  // namespace cpufold
