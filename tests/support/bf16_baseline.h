// The baseline the bf16 accuracy tests measure against: what rounding only the parameters to
// bf16 costs a model that otherwise runs in fp32 (issue 11.5).
#pragma once

#include <filesystem>

namespace cpufold::testing {

// Writes every parameter of `params` (.npz or cpufold .h5), rounded to bf16 (nearest even) and
// stored as f32, to the cpufold HDF5 file `out` (name it like the source's stem, e.g.
// params_model_1_ptm.h5, so the preset is found the same way).
void write_bf16_rounded_params(const std::filesystem::path& params,
                               const std::filesystem::path& out);

}  // namespace cpufold::testing
