// How the predictions of one job are ranked (ColabFold's ranking_confidence).
#pragma once

#include <string>
#include <vector>

#include "pipeline/output/job_outputs.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

enum class RankBy { automatic, plddt, ptm };

// "auto", "plddt" or "ptm"; InputError otherwise.
RankBy parse_rank_by(const std::string& name);

// Mean pLDDT, or 100 x pTM when ranking by pTM and the model has the PAE head.
double ranking_score(const Prediction& p, RankBy rank);

// Best first; of equal scores the later run first, as ColabFold's reversed argsort ranks them.
void sort_by_score(std::vector<RenderedPrediction>& results);

}  // namespace cpufold
