// The last check before a prediction is written: NaN or Inf in coordinates or confidences
// would otherwise become a "successful" job (-nan coordinates, a PAE plot of perfect
// confidence), so such a prediction is refused, naming the outputs that hold them.
#pragma once

#include <span>
#include <string>
#include <utility>

#include "memory/error.h"
#include "memory/tensor.h"

namespace cpufold {

struct Prediction;

// Outputs went non-finite with finite parameters: fp32 overflow (parameters far outside a
// trained model's range) or a bug. Exit 5 where it escapes; predict fails only that job.
class NonFiniteOutputError : public InternalError {
 public:
  using InternalError::InternalError;
};

struct NamedOutput {
  std::string name;
  Tensor tensor;
};

// "plddt f32[8] holds 8 non-finite values (8 NaN, 0 Inf), the first at [0]; ..." for every
// output holding any; empty when all are finite.
std::string non_finite_outputs(std::span<const NamedOutput> outputs);

// Throws NonFiniteOutputError "<what>: <non_finite_outputs>; <advice>" unless all are finite.
void require_finite_outputs(std::span<const NamedOutput> outputs, const std::string& what);

// The same for what a prediction's files show: atom positions, pLDDT and, with a PAE head,
// PAE and pTM.
void require_finite_prediction(const Prediction& p, const std::string& what);

}  // namespace cpufold
