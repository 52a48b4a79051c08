#include "pipeline/output/scores_json.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "pipeline/output/output_values.h"

namespace cpufold {
namespace {

// numpy's np.around(x, decimals): scale, round half to even, unscale (in double).
double round_to(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(x * scale) / scale;
}

nlohmann::ordered_json rounded_vector(const std::vector<float>& v, int decimals) {
  auto out = nlohmann::ordered_json::array();
  for (float x : v) out.push_back(round_to(x, decimals));
  return out;
}

nlohmann::ordered_json rounded_matrix(const std::vector<float>& m, std::int64_t n, int decimals) {
  auto out = nlohmann::ordered_json::array();
  for (std::int64_t i = 0; i < n; ++i) {
    auto row = nlohmann::ordered_json::array();
    for (std::int64_t j = 0; j < n; ++j) {
      row.push_back(round_to(m[static_cast<std::size_t>(i * n + j)], decimals));
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::int64_t residue_count(const PredictionView& p) {
  if (p.plddt.empty() || p.plddt.rank() != 1 || p.plddt.dim(0) == 0) {
    throw InternalError("scores: the prediction has no pLDDT vector");
  }
  return p.plddt.dim(0);
}

std::vector<float> pae_values(const PredictionView& p, std::int64_t n) {
  return f32_values(p.pae, Shape{n, n}, "predicted_aligned_error");
}

}  // namespace

std::string scores_json(const PredictionView& p, const MsaReport* msa) {
  const std::int64_t n = residue_count(p);
  // ColabFold's key order and rounding (batch.py): plddt, then with the PAE head max_pae (the
  // matrix maximum, unrounded), pae and ptm.
  nlohmann::ordered_json j;
  j["plddt"] = rounded_vector(f32_values(p.plddt, Shape{n}, "plddt"), 2);
  if (p.has_pae) {
    const std::vector<float> pae = pae_values(p, n);
    j["max_pae"] = static_cast<double>(*std::max_element(pae.begin(), pae.end()));
    j["pae"] = rounded_matrix(pae, n, 2);
    j["ptm"] = round_to(p.ptm, 2);
  }
  if (msa != nullptr) {
    nlohmann::ordered_json m;
    m["source"] = msa->source;
    m["files"] = nlohmann::ordered_json::array();
    for (const MsaFileRows& f : msa->files) {
      nlohmann::ordered_json file;
      file["path"] = f.path;
      file["rows"] = f.rows;
      m["files"].push_back(std::move(file));
    }
    m["rows"] = msa->rows;
    j["msa"] = std::move(m);
  }
  return j.dump();
}

std::string pae_v1_json(const PredictionView& p) {
  if (!p.has_pae) {
    throw InputError(
        "no predicted aligned error to write: the model has no PAE head (use a pTM model, e.g. "
        "params_model_1_ptm)");
  }
  const std::int64_t n = residue_count(p);
  // ColabFold's batch.py copies both values from the rank-1 scores file.
  const std::vector<float> pae = pae_values(p, n);
  nlohmann::ordered_json j;
  j["predicted_aligned_error"] = rounded_matrix(pae, n, 2);
  j["max_predicted_aligned_error"] = static_cast<double>(*std::max_element(pae.begin(), pae.end()));
  return j.dump();
}

}  // namespace cpufold
