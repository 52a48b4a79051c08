// Every output of a prediction in HDF5 under the reference's `outputs/` names (`cpufold
// evaluate --out`, `cpufold predict --save-all`).
#pragma once

#include <vector>

#include "io/hdf5_tensor_file.h"
#include "pipeline/runner/finite_outputs.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

// The tensor outputs (the scalars pTM and max PAE are fields of Prediction), as views.
std::vector<NamedOutput> prediction_tensors(const Prediction& p);

void write_prediction_outputs(Hdf5TensorWriter& out, const Prediction& p);

}  // namespace cpufold
