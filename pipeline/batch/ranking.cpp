#include "pipeline/batch/ranking.h"

#include <algorithm>

#include "memory/error.h"

namespace cpufold {

RankBy parse_rank_by(const std::string& name) {
  if (name == "auto") return RankBy::automatic;
  if (name == "plddt") return RankBy::plddt;
  if (name == "ptm") return RankBy::ptm;
  throw InputError("--rank must be auto, plddt or ptm, not '" + name + "'");
}

double ranking_score(const Prediction& p, RankBy rank) {
  if (rank == RankBy::ptm && p.has_pae) return 100.0 * p.ptm_score;
  double sum = 0;
  for (std::int64_t i = 0; i < p.plddt.numel(); ++i) sum += p.plddt.at<float>({i});
  return sum / static_cast<double>(std::max<std::int64_t>(p.plddt.numel(), 1));
}

void sort_by_score(std::vector<RenderedPrediction>& results) {
  // ColabFold: np.argsort(scores)[::-1], an ascending sort (stable for its few predictions)
  // read backwards.
  std::stable_sort(
      results.begin(), results.end(),
      [](const RenderedPrediction& a, const RenderedPrediction& b) { return a.score < b.score; });
  std::reverse(results.begin(), results.end());
}

}  // namespace cpufold
