// ColabFold's JSON outputs, written with nlohmann-json.
#pragma once

#include <string>

#include "pipeline/output/msa_report.h"
#include "pipeline/output/prediction_view.h"

namespace cpufold {

// {job}_scores_rank_*.json as ColabFold's batch.py writes it: {"plddt" [n], "max_pae",
// "pae" [n][n], "ptm"} in that order; plddt, pae and ptm rounded to two decimals (numpy's
// round half to even), max_pae the largest PAE matrix entry, unrounded. "max_pae", "pae" and
// "ptm" only when the model has the PAE head. With `msa`, cpufold adds "msa": {"source",
// "files": [{"path", "rows"}], "rows"} last (ColabFold readers ignore the extra key).
std::string scores_json(const PredictionView& p, const MsaReport* msa = nullptr);

// {job}_predicted_aligned_error_v1.json as ColabFold's batch.py writes it from the rank-1
// scores: {"predicted_aligned_error": the scores' "pae" ([n][n], two decimals),
// "max_predicted_aligned_error": the scores' "max_pae" (the matrix maximum)}.
// InputError when the model has no PAE head.
std::string pae_v1_json(const PredictionView& p);

}  // namespace cpufold
