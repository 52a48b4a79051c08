// `cpufold predict --databases DIR`: the jobs of a batch that have no MSA are searched with
// `cpufold search`'s code (pipeline/search/) into OUTPUT_DIR/msas/, where the jobs read them and
// where a rerun finds them and searches nothing. One process searches them all before any fold
// (search_each_job); --instances runs each search as a task of its own (search_job_msas in a
// worker), beside other jobs' folds.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pipeline/batch/predict.h"
#include "pipeline/batch/predict_jobs.h"

namespace cpufold {

// Before any work: InputError when --search-method is unknown or --databases has none of the
// method's databases (or a corrupt one). Nothing without --databases.
void check_search_options(const PredictOptions& o);

// The jobs not done yet whose MSA source is the databases and that lack some of the files their
// search writes: what search_job_msas would search now.
std::set<std::string> jobs_to_search(const PredictOptions& o, const std::vector<PredictJob>& jobs);

// Searches as search_job_msas does, one job at a time (mmseqs2: all together), in this process:
// a job whose search program fails or is killed for memory gets that as its error (its kind
// says which) and the others go on. A missing program or database still stops the batch.
std::map<std::string, double> search_each_job(const PredictOptions& o,
                                              std::vector<PredictJob>& jobs,
                                              const std::function<void(const std::string&)>& say);

// Searches the jobs not done yet whose MSA source is the databases (msa_source.h) and returns, per
// job searched now, the seconds its programs took. `say` gets the search's progress lines. A
// failing program stops the batch with its error (exit status as `cpufold search`'s); the
// files of the jobs searched before stay, so a rerun goes on from there.
std::map<std::string, double> search_job_msas(const PredictOptions& o,
                                              const std::vector<PredictJob>& jobs,
                                              const std::function<void(const std::string&)>& say);

}  // namespace cpufold
