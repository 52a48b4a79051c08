#include "pipeline/runner/finite_outputs.h"

#include "memory/non_finite.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

std::string non_finite_outputs(std::span<const NamedOutput> outputs) {
  std::string found;
  for (const NamedOutput& o : outputs) {
    const NonFinite n = find_non_finite(o.tensor);
    if (n.count == 0) continue;
    found += (found.empty() ? "" : "; ") + o.name + " " + o.tensor.describe() + " holds " +
             describe(n, o.tensor.shape());
  }
  return found;
}

void require_finite_outputs(std::span<const NamedOutput> outputs, const std::string& what) {
  const std::string found = non_finite_outputs(outputs);
  if (found.empty()) return;
  throw NonFiniteOutputError(
      what + ": non-finite outputs, nothing written: " + found +
      ". The parameters are finite, so the model overflowed fp32: check that the parameter "
      "file is an unmodified AlphaFold2 release; if it is, this is a cpufold bug (please "
      "report it with the input)");
}

void require_finite_prediction(const Prediction& p, const std::string& what) {
  float ptm = p.ptm_score;
  const NamedOutput checked[] = {{"atom positions", p.final_atom_positions},
                                 {"pLDDT", p.plddt},
                                 {"PAE", p.has_pae ? p.predicted_aligned_error : Tensor()},
                                 {"pTM", p.has_pae ? Tensor(&ptm, DType::f32, Shape{}) : Tensor()}};
  require_finite_outputs(checked, what);
}

}  // namespace cpufold
