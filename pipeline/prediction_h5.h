// Every output of a prediction in HDF5 under the reference's `outputs/` names (`cpufold
// evaluate --out`, `cpufold predict --save-all`).
#pragma once

#include "io/hdf5_tensor_file.h"
#include "pipeline/model_runner.h"

namespace cpufold {

void write_prediction_outputs(Hdf5TensorWriter& out, const Prediction& p);

}  // namespace cpufold
